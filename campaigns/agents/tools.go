package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
)

// ToolCallsDir is where Toolbox keeps the result of each call, by message
// id, under the campaign's tmp/ directory.
const ToolCallsDir = campaigns.TmpDir + "/tool-calls"

// Toolbox runs the game master's tools (see package tools) for messages
// that name one in a tool field:
//
//	---
//	to: tools
//	tool: update_inventory
//	arguments: {"character": "tilda-brannock", "updates": [{"slug": "torch", "quantityChange": -1}]}
//	---
//
// The arguments are JSON, in the arguments field (a JSON string, or a
// YAML mapping) or in the body. It answers the sender with an informal
// message whose tool and success fields say how the call went and whose
// body is the result as JSON: the tool's result, or {"success": false,
// "message": "Error: ..."} for a call that failed, which changed no file.
//
// A call from an agent that plays a character (Players, or an agent named
// after a sheet) acts on that character when it names none, and may change
// no other sheet. A message without a tool field sent to the toolbox
// alone is answered with how to call one; a broadcast is passed over.
//
// A call is carried out once per message: its answer is kept in
// tmp/tool-calls/<message id>.json, and a message delivered again (after a
// crash) gets that answer without the sheet changing a second time.
type Toolbox struct {
	Campaigns
	// Players maps an agent to the character it plays: the character a
	// call from that agent means when it names none.
	Players map[string]string
	// Dice rolls for roll_dice.
	Dice dice.Source
	// People are told, with a notice, of a call that could not change a
	// sheet because the sheet itself is malformed (what campaign check
	// calls it): the story says "6 damage" and the sheet keeps its hit
	// points, which only the caller would otherwise know.
	People []string

	mu sync.Mutex // one call at a time: sheets are read, changed and saved
}

// Handle runs the tool one message calls.
func (t *Toolbox) Handle(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, error) {
	name := field(in, "tool")
	if name == "" {
		if !direct(in) {
			return nil, nil // a broadcast: not a call
		}
		return []*mailbox.Message{mailbox.Reply(in, []byte("Which tool? Name it in a tool field (tool: roll_dice) and give its JSON arguments in an arguments field or the body. Tools: roll_dice, add_inventory, update_inventory, update_character, get_character_stats.\n"))}, nil
	}
	camp, err := t.For(in)
	if err != nil {
		return nil, err
	}
	id, _ := in.Header().Get("id")
	record := "" // a message without a usable id is answered, not recorded
	if mailbox.IsID(id) {
		record = filepath.Join(camp.Path(ToolCallsDir), id+".json")
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if record != "" {
		if done, err := os.ReadFile(record); err == nil {
			return []*mailbox.Message{answer(in, name, done)}, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	var result []byte
	var notice *mailbox.Message
	args, err := arguments(in)
	if err == nil {
		box := tools.New(camp, t.Dice)
		// A player's agent calls for its own character, and changes no
		// other sheet.
		box.Character = playerOf(in, t.Players, camp)
		box.Own = box.Character
		var res any
		if res, err = box.Call(ctx, name, args); err == nil {
			result, err = encode(res)
		}
	}
	if err != nil {
		result, _ = encode(map[string]any{"success": false, "message": "Error: " + err.Error()})
		notice = t.malformed(in, name, err)
	}
	if record != "" {
		if err := os.MkdirAll(filepath.Dir(record), 0o755); err != nil {
			return nil, err
		}
		if err := mailbox.WriteFileAtomic(record, result); err != nil {
			return nil, err
		}
	}
	out := []*mailbox.Message{answer(in, name, result)}
	if notice != nil {
		out = append(out, notice)
	}
	return out, nil
}

// SheetNotice is the notice: field of the notice Toolbox sends People
// when a call could not change a malformed sheet.
const SheetNotice = "sheet_unchanged"

// malformed returns the notice to People of a call that failed with err
// (SheetUnchanged), or nil.
func (t *Toolbox) malformed(in *mailbox.Message, tool string, err error) *mailbox.Message {
	from, _ := in.Header().Get("from")
	camp, _ := t.For(in)
	m := SheetUnchanged(camp, from, tool, err, t.People)
	if m == nil {
		return nil
	}
	if id, _ := in.Header().Get("id"); id != "" {
		m.Set("reply_to", id)
	}
	return m
}

// SheetUnchanged returns the notice to people that caller's call of tool
// failed with err on a sheet that is malformed (it cannot be read, or
// holds values campaign check calls malformed) or holds a merge conflict
// git left (textfile.ErrConflict), or nil: for a call
// refused for its own sake (no such item), which is the caller's to
// mend, and when there are no people but the caller. It is the one notice of the kind,
// however the game master calls its tools (the tools agent, an openai
// model's tool calls, parley mcp), sent to people with the notice:
// field SheetNotice. camp, when not nil, shortens the paths err names.
func SheetUnchanged(camp *campaigns.Campaign, caller, tool string, err error, people []string) *mailbox.Message {
	// The caller has the error already: an undriven game master (its
	// client on parley mcp) is not told twice.
	people = slices.DeleteFunc(slices.Clone(people), func(p string) bool { return p == caller })
	if len(people) == 0 {
		return nil
	}
	short := func(err error) string {
		if camp != nil {
			return camp.Short(err).Error()
		}
		return err.Error()
	}
	// A sheet git left a merge conflict in: only a person can resolve it.
	if ce := (*textfile.ConflictError)(nil); errors.As(err, &ce) {
		who := strings.TrimSuffix(filepath.Base(ce.Path), ".md")
		m := mailbox.New([]byte(fmt.Sprintf("%s's %s changed nothing: %s. The story goes on, and the sheet does not follow it until the conflict is resolved.\n", caller, tool, short(err))))
		m.SetNames("to", people)
		m.SetValue("notice", SheetNotice)
		m.Set("summary", fmt.Sprintf("%s's %s changed nothing: %s holds a merge conflict", caller, tool, who))
		return m
	}
	var se *sheet.Error
	if !errors.As(err, &se) || se.Path == "" {
		return nil
	}
	d, rerr := sheet.Read(se.Path)
	if rerr == nil && len(d.Problems()) == 0 {
		return nil
	}
	who := strings.TrimSuffix(filepath.Base(se.Path), ".md")
	m := mailbox.New([]byte(fmt.Sprintf("%s's %s changed nothing: %s. The story goes on, and the sheet does not follow it until it is set right: `parley campaign check` names what is wrong, %s.\n", caller, tool, short(err), mendAdvice(se, who, rerr == nil))))
	m.SetNames("to", people)
	// Informal (no type:), with the kind in a field, as parley's other
	// notices to people: a protocol knows no type of parley's own.
	m.SetValue("notice", SheetNotice)
	m.Set("summary", fmt.Sprintf("%s's %s changed nothing: %s is malformed", caller, tool, who))
	return m
}

// mendAdvice says what sets right the sheet of who that se is about
// (reads: the sheet reads, with a value out of range): `parley character
// set` of the field, for a value it reads (hit points above the maximum)
// or a number written that is not one ("three/8"), which it writes over;
// an edit by hand for what it cannot read (a table row without its value
// cell, two items of one name, "seven of twelve").
func mendAdvice(se *sheet.Error, who string, reads bool) string {
	var nn *sheet.NotNumber
	switch {
	case errors.As(se, &nn) && nn.Mendable() && sheet.Key(se.Field) != "":
		return fmt.Sprintf("`parley character set %s %s=N` sets it", who, sheet.Key(se.Field))
	case reads:
		return fmt.Sprintf("`parley character set %s` sets it", who)
	}
	return fmt.Sprintf("an edit of party/%s.md by hand sets it", who)
}

// encode returns v as indented JSON, "->" left as it is, ending in a
// newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.Bytes(), err
}

// arguments returns a tool call's JSON arguments.
func arguments(in *mailbox.Message) (json.RawMessage, error) {
	if in.Payload().Has("arguments") {
		switch v := in.Payload().Value("arguments").(type) {
		case string:
			return json.RawMessage(v), nil
		case nil:
			return json.RawMessage("{}"), nil
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("arguments: %w", err)
			}
			return b, nil
		}
	}
	return json.RawMessage(bytes.TrimSpace(in.Body)), nil
}

// answer is the reply to a tool call: the result as the body.
func answer(in *mailbox.Message, tool string, result []byte) *mailbox.Message {
	out := mailbox.Reply(in, result)
	out.Set("tool", tool)
	var r struct {
		Success     *bool  `json:"success"`
		Message     string `json:"message"`
		Description string `json:"description"`
	}
	ok := json.Unmarshal(result, &r) == nil && (r.Success == nil || *r.Success)
	out.SetValue("success", strconv.FormatBool(ok))
	// The summary is what `parley inbox` shows: what the call did.
	if sum := strings.TrimSpace(r.Description + " " + r.Message); sum != "" {
		out.Set("summary", sum)
	}
	return out
}
