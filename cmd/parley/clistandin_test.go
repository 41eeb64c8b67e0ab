package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Stand-ins for the command-line agents examples/dnd-llm runs, as
// testscript commands (claude and codex on a script's PATH). Each takes
// the flags its program takes, as their public documentation describes
// them, refuses others, and prints what the program prints, in the
// shapes documented: claude -p's text, json and stream-json output (and
// stream-json input, for a session); codex exec's final message on
// stdout (or --json events), progress on stderr, -o. What they answer is
// the file $STANDIN_ANSWER names (the same for every call); what they
// were given is appended to NAME.log in the directory they run in.

// claudeStandin is claude -p.
func claudeStandin() int {
	args := os.Args[1:]
	print, verbose := false, false
	out, in, system, prompt := "text", "text", "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() string {
			if i+1 >= len(args) {
				fmt.Fprintf(os.Stderr, "error: option '%s' argument missing\n", a)
				os.Exit(1)
			}
			i++
			return args[i]
		}
		switch {
		case a == "-p" || a == "--print":
			print = true
		case a == "--verbose":
			verbose = true
		case a == "--output-format":
			out = value()
		case a == "--input-format":
			in = value()
		case a == "--append-system-prompt":
			system = value()
		case a == "--model" || a == "--allowedTools" || a == "--disallowedTools" || a == "--permission-mode" || a == "--max-turns":
			value()
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(os.Stderr, "error: unknown option '%s'\n", a)
			return 1
		default:
			prompt = a
		}
	}
	if !print {
		fmt.Fprintln(os.Stderr, "the stand-in plays claude -p only")
		return 1
	}
	switch out {
	case "text", "json", "stream-json":
	default:
		fmt.Fprintf(os.Stderr, "error: Invalid output format: %s\n", out)
		return 1
	}
	if out == "stream-json" && !verbose {
		fmt.Fprintln(os.Stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return 1
	}
	answer := standinAnswer()
	const session = "5f1c0de2-0000-4000-8000-standin00001"
	result := func(w io.Writer) {
		json.NewEncoder(w).Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "num_turns": 1, "result": answer, "session_id": session, "total_cost_usd": 0})
	}
	if in == "stream-json" {
		if out != "stream-json" {
			fmt.Fprintln(os.Stderr, "Error: --input-format=stream-json requires output-format=stream-json.")
			return 1
		}
		json.NewEncoder(os.Stdout).Encode(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": "stand-in"})
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var turn struct {
				Type    string `json:"type"`
				Message struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"message"`
			}
			if err := json.Unmarshal(sc.Bytes(), &turn); err != nil || turn.Type != "user" {
				fmt.Fprintf(os.Stderr, "Error parsing streaming input line: %s\n", sc.Text())
				return 1
			}
			standinLog("claude", fmt.Sprintf("argv: %q\nsystem: %s\nturn:\n%s", args, system, turn.Message.Content))
			json.NewEncoder(os.Stdout).Encode(map[string]any{"type": "assistant", "session_id": session,
				"message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": answer}}}})
			result(os.Stdout)
		}
		return 0
	}
	stdin, _ := io.ReadAll(os.Stdin)
	standinLog("claude", fmt.Sprintf("argv: %q\nsystem: %s\nprompt: %s\nstdin:\n%s", args, system, prompt, stdin))
	switch out {
	case "text":
		fmt.Println(answer)
	case "json":
		result(os.Stdout)
	case "stream-json":
		json.NewEncoder(os.Stdout).Encode(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": "stand-in"})
		json.NewEncoder(os.Stdout).Encode(map[string]any{"type": "assistant", "session_id": session,
			"message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": answer}}}})
		result(os.Stdout)
	}
	return 0
}

// codexStandin is codex exec.
func codexStandin() int {
	args := os.Args[1:]
	if len(args) == 0 || args[0] != "exec" {
		fmt.Fprintln(os.Stderr, "the stand-in plays codex exec only")
		return 2
	}
	args = args[1:]
	jsonOut := false
	last, prompt := "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() string {
			if i+1 >= len(args) {
				fmt.Fprintf(os.Stderr, "error: a value is required for '%s'\n", a)
				os.Exit(2)
			}
			i++
			return args[i]
		}
		switch {
		case a == "--json":
			jsonOut = true
		case a == "--skip-git-repo-check" || a == "--ephemeral" || a == "--full-auto":
		case a == "-o" || a == "--output-last-message":
			last = value()
		case a == "-s" || a == "--sandbox":
			if v := value(); v != "read-only" && v != "workspace-write" && v != "danger-full-access" {
				fmt.Fprintf(os.Stderr, "error: invalid value '%s' for '--sandbox <SANDBOX_MODE>'\n", v)
				return 2
			}
		case a == "-m" || a == "--model" || a == "-C" || a == "--cd":
			value()
		case a == "-":
			prompt = "-"
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(os.Stderr, "error: unexpected argument '%s' found\n", a)
			return 2
		default:
			prompt = a
		}
	}
	stdin, _ := io.ReadAll(os.Stdin)
	standinLog("codex", fmt.Sprintf("argv: %q\nprompt: %s\nstdin:\n%s", args, prompt, stdin))
	answer := standinAnswer()
	fmt.Fprintln(os.Stderr, "[stand-in] codex exec: thinking") // progress goes to stderr
	if last != "" {
		if err := os.WriteFile(last, []byte(answer+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.Encode(map[string]any{"type": "thread.started", "thread_id": "0199a213-standin"})
		enc.Encode(map[string]any{"type": "turn.started"})
		enc.Encode(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "agent_message", "text": answer}})
		enc.Encode(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 100, "output_tokens": 10}})
		return 0
	}
	fmt.Println(answer)
	return 0
}

// standinAnswer is what a stand-in answers: the file $STANDIN_ANSWER, or,
// when it names none, the file $STANDIN_ANSWER_<AGENT> for the parley
// agent it runs as.
func standinAnswer() string {
	path := os.Getenv("STANDIN_ANSWER_" + strings.ToUpper(os.Getenv("PARLEY_AGENT")))
	if path == "" {
		path = os.Getenv("STANDIN_ANSWER")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "(the stand-in has no answer: " + err.Error() + ")"
	}
	return strings.TrimRight(string(data), "\n")
}

// standinLog appends an entry to NAME.log.
func standinLog(name, entry string) {
	f, err := os.OpenFile(name+".log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== %s\n%s\n", os.Getenv("PARLEY_AGENT"), strings.TrimRight(entry, "\n"))
}
