package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// fixtureCampaign is the shared fixture campaign, beside the checkout.
var fixtureCampaign = filepath.Join("..", "..", "..", "shared", "fixtures", "campaigns", "the-rot-beneath")

// guardTable is a table whose campaign is the fixture campaign's
// story-state.md, and a sheet with a secret of its own.
func guardTable(t testing.TB) *Workspace {
	t.Helper()
	story, err := os.ReadFile(filepath.Join(fixtureCampaign, "story-state.md"))
	if err != nil {
		t.Skipf("the fixture campaign is not beside the checkout (../shared): %v", err)
	}
	cfg, err := ParseConfig(ConfigFile, []byte("skills: [dnd-team]\ncampaign: rot\nagents:\n  - gm\n  - narrator\n  - {name: lead, role: team-lead}\n  - {name: aria, role: player, character: tilda-brannock}\n  - {name: bram, role: player, character: corwin-voss}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	party := filepath.Join(ws.Root, CampaignsDir, "rot", "party")
	if err := os.MkdirAll(party, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.Root, CampaignsDir, "rot", storyState), story, 0o644); err != nil {
		t.Fatal(err)
	}
	sheet := "# Corwin Voss\n\n| **Hit Points** | 8/8 |\n\n## Secrets\n\n- Corwin still owes the Guild three hundred gold crowns.\n\n## Notes\n\nLikes cats.\n"
	if err := os.WriteFile(filepath.Join(party, "corwin-voss.md"), []byte(sheet), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestSecretsGuard: a message for players or the narrator that carries a
// sentence of the game master's secrets, or of another character's, is
// refused, whatever its capitals, punctuation and line breaks, and
// whatever its type, a plain reply with none included; the story itself,
// a character's secret to that character, and a secret to the game
// master's side (gm, team lead) in a type not guarded, pass. A refusal
// names the file and the secret part, never the words: its reason is
// shown at a player's seat (a notice that a message was given up),
// which quoted the sentence. Quoted, for the sender alone, quotes what
// the message holds of a secret, never more: quoting the whole sentence
// told a player who happened on eight of its words the rest of the
// secret.
func TestSecretsGuard(t *testing.T) {
	ws := guardTable(t)
	tests := []struct {
		name, sender, text string
		field              string // "" when it passes
		quote              string
	}{
		{"a secret, word for word", "gm", "[NARRATIVE]\n\nThe rain falls. Sergeant Korvus Thane, is being blackmailed by the cult.\n",
			"body", `words of the game master's secrets (campaigns/rot/story-state.md, the secret part at line 66) to narrator, lead, aria, bram, who may not know it: "sergeant korvus thane is being blackmailed by the cult"`},
		{"another case, other commas, a line break", "gm", "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: inn\n\n## Scene\nyou overhear: THE GUILD'S nine fingers is aware something\nsupernatural is happening -- and is looking for allies!\n",
			"body", "The Guild's Nine-Fingers is aware something supernatural is happening and is looking for allies"},
		{"in a field", "gm", "[NARRATOR_NOTE]\nfrom: gm\nnote: \"Hint that three Parliament members are active cult participants: Duke Portyr's nephew Aldric Portyr, Lady Bormul, and Councilor Dillard Wren\"\n",
			"note", "Three Parliament members are active cult participants: Duke Portyr's nephew Aldric Portyr, Lady Bormul, and Councilor Dillard Wren"},
		{"another character's secret", "gm", "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: inn\n\nYou know Corwin still owes the Guild three hundred gold crowns.\n",
			"body", "Corwin still owes the Guild three hundred gold crowns."},
		{"a character's own secret, to that character", "gm", "[GM_TO_PLAYER]\nto: bram\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: inn\n\nYou remember: Corwin still owes the Guild three hundred gold crowns.\n", "", ""},
		{"eight words of one in a row", "gm", "[NARRATIVE]\n\nRumour says the sickness is actually the early stages of hollowing.\n",
			"body", `"the sickness is actually the early stages of hollowing"`},
		{"the story", "gm", "[NARRATIVE]\n\nThe Hollow Congregation is a name whispered in the docks. The cult is real.\n", "", ""},
		{"to the game master, in a type not guarded", "aria", "[PLAYER_TO_GM]\ntype: ACTION\ncharacter: tilda-brannock\n\nSergeant Korvus Thane is being blackmailed by the cult, I bet.\n", "", ""},
		{"a plain reply to a player", "gm", "---\nto: aria\n---\nBetween us: Sergeant Korvus Thane is being blackmailed by the cult.\n",
			"body", "sergeant korvus thane is being blackmailed by the cult"},
		{"a type not guarded, to a player", "gm", "---\nto: aria\ntype: report\nsummary: Sergeant Korvus Thane is being blackmailed by the cult\n---\nAll quiet.\n",
			"summary", "sergeant korvus thane is being blackmailed by the cult"},
		{"a plain reply to the team lead", "gm", "---\nto: lead\n---\nRemember: Sergeant Korvus Thane is being blackmailed by the cult.\n", "", ""},
		{"a plain reply to the team lead and a player", "gm", "---\nto: [lead, bram]\n---\nRemember: Sergeant Korvus Thane is being blackmailed by the cult.\n",
			"body", "sergeant korvus thane is being blackmailed by the cult"},
		{"another character's secret, player to player", "bram", "---\nto: aria\n---\nDon't tell: Corwin still owes the Guild three hundred gold crowns.\n",
			"body", "Corwin still owes the Guild three hundred gold crowns."},
		{"a character's secret, to the game master", "bram", "---\nto: gm\n---\nCorwin still owes the Guild three hundred gold crowns.\n", "", ""},
	}
	// Of the secret, not in the message: never quoted.
	hidden := map[string]string{
		"a secret, word for word":                     "Ravengard",
		"eight words of one in a row":                 "victims are being drained",
		"a plain reply to a player":                   "Ravengard",
		"a type not guarded, to a player":             "Ravengard",
		"a plain reply to the team lead and a player": "Ravengard",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mailbox.Parse([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			v, err := ws.Check(Input{File: "m.md", Sender: tt.sender, Message: m})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.field == "" && !v.Accepted():
				t.Errorf("refused: %v", v.Refusal)
			case tt.field != "" && v.Accepted():
				t.Errorf("delivered to %v; want refused in %s", v.Agents(), tt.field)
			case tt.field != "" && !slices.ContainsFunc(v.Refusal.Problems(), func(f *Refusal) bool { return f.Field == tt.field && strings.Contains(f.Quoted(), tt.quote) }):
				// Among the others: a type the protocol does not know is
				// refused too.
				t.Errorf("refusal = %v; want field %s quoting %q", v.Refusal.Quoted(), tt.field, tt.quote)
			case tt.field != "" && strings.Contains(strings.ToLower(v.Refusal.Error()), strings.ToLower(strings.Trim(tt.quote[strings.LastIndex(tt.quote, ": ")+1:], ` ".`))):
				t.Errorf("refusal = %v; it quotes the secret, which a person at a player's seat reads", v.Refusal)
			case tt.field != "" && !strings.Contains(v.Refusal.Error(), `, the secret part at line `):
				t.Errorf("refusal = %v; want it to name the secret part by its line", v.Refusal)
			case hidden[tt.name] != "" && strings.Contains(strings.ToLower(v.Refusal.Quoted()), strings.ToLower(hidden[tt.name])):
				t.Errorf("refusal = %v; it tells the sender %q, of the secret, which the message did not hold", v.Refusal.Quoted(), hidden[tt.name])
			}
		})
	}
}

// TestSecretsEdited: the guard keeps what it read of each campaign file,
// and still honours an edit made by hand at once — a new secret is
// guarded at the next check, one taken out no longer is, also when the
// edit keeps the file's size (a different modification time says so) —
// and forgets a sheet that is removed.
func TestSecretsEdited(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte("skills: [dnd-team]\ncampaign: c\nagents:\n  - gm\n  - {name: aria, role: player, character: tilda}\n  - {name: bram, role: player, character: corwin}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	party := filepath.Join(ws.Root, CampaignsDir, "c", "party")
	if err := os.MkdirAll(party, 0o755); err != nil {
		t.Fatal(err)
	}
	story := filepath.Join(ws.Root, CampaignsDir, "c", storyState)
	sheet := filepath.Join(party, "corwin.md")
	write := func(path, secret string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte("# Notes\n\n## Secrets\n\n- "+secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(body string) bool {
		t.Helper()
		m, err := mailbox.Parse([]byte("---\nto: aria\n---\n" + body + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ws.checkSecrets(m, []string{"aria"})
		if err != nil {
			t.Fatal(err)
		}
		return r != nil
	}
	then := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	write(story, "The innkeeper poisoned the well last night.", then)
	write(sheet, "Corwin owes the river guild a thousand crowns.", then)
	steps := []struct {
		name string
		edit func()
		body string
		want bool
	}{
		{"the story's secret", func() {}, "The innkeeper poisoned the well last night.", true},
		{"a sheet's secret", func() {}, "Corwin owes the river guild a thousand crowns.", true},
		{"a secret written in since", func() { write(story, "The mayor hired the cult to burn the mill.", then.Add(time.Second)) }, "The mayor hired the cult to burn the mill.", true},
		{"the secret it replaced", func() {}, "The innkeeper poisoned the well last night.", false},
		{"an edit of the same size", func() { write(story, "The deputy hired the cult to burn the inn.", then.Add(2*time.Second)) }, "The deputy hired the cult to burn the inn.", true},
		{"before the edit of the same size", func() {}, "The mayor hired the cult to burn the mill.", false},
		{"a sheet removed", func() {
			if err := os.Remove(sheet); err != nil {
				t.Fatal(err)
			}
		}, "Corwin owes the river guild a thousand crowns.", false},
	}
	for _, st := range steps {
		st.edit()
		if got := refused(st.body); got != st.want {
			t.Errorf("%s: refused = %v, want %v", st.name, got, st.want)
		}
	}
	if n := len(ws.secretFiles.files); n != 1 {
		t.Errorf("files kept = %d, want 1 (story-state.md alone, the sheet removed)", n)
	}
}

func TestSecretSentences(t *testing.T) {
	text := "# Story\n\nThe party is at the inn and all is well.\n\n## GM Notes (Secret)\n\n### Hidden\n- The innkeeper poisoned the well last night. He hates the mayor!\n- N/A - campaign not started\n\n| Character | Secret | Hook |\n|---|---|---|\n| tilda | She stole the silver bell from the chapel | later |\n\n## Party Status\n\nEveryone is tired after the long road.\n"
	got := secretSentences(text)
	want := []string{"The innkeeper poisoned the well last night.", "He hates the mayor!", "She stole the silver bell from the chapel"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("secretSentences = %q, want %q", got, want)
	}
	text = "Sel Varga\n=========\n\nA singer of the drowned chapel.\n\nSecrets Sel keeps from everyone\n-------------------------------\n\nSel still sings the drowned hymn every night.\n\nNotes\n-----\n\nShe likes the rain very much.\n\n## Voice\n\nShe hums when she lies.\n"
	got = secretSentences(text)
	// An underlined heading ends no secret part (it may be a line of it
	// over a rule): the Notes stay secret; the # heading ends the part.
	// The part's own heading is a line of it (a heading may tell a
	// secret), when it has four words or more.
	want = []string{"Secrets Sel keeps from everyone", "Sel still sings the drowned hymn every night.", "She likes the rain very much."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("secretSentences(setext) = %q, want %q", got, want)
	}
}

// TestSecretSentencesWrapped: the lines of a paragraph or of a list
// item are read together, as markdown reads them. A tryout: a bullet of
// story-state.md's secret part, or a paragraph of a sheet's Secrets,
// wrapped over two lines was taken for two sentences, so a message
// holding ten words in a row across the break got through.
func TestSecretSentencesWrapped(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		// Each line counts on its own too (fail closed: a line with no
		// stop may be a sentence its writer left without one).
		{"a list item, its continuation indented",
			"## Secrets\n\n- The old priest buried the bell beneath\n  the chapel floor before the flood came.\n- The miller knows where the key is hidden.\n",
			[]string{"The old priest buried the bell beneath the chapel floor before the flood came.", "The old priest buried the bell beneath", "the chapel floor before the flood came.", "The miller knows where the key is hidden."}},
		{"a list item, its continuation lazy",
			"## Secrets\n* The old priest buried the bell beneath\nthe chapel floor before the flood came.\n",
			[]string{"The old priest buried the bell beneath the chapel floor before the flood came.", "The old priest buried the bell beneath", "the chapel floor before the flood came."}},
		{"a paragraph, soft-wrapped",
			"## Secrets\n\nTilda stole the silver chalice from the temple of\nthe drowned god when she was only twelve years old. She never\ntold anyone about it.\n",
			[]string{"Tilda stole the silver chalice from the temple of the drowned god when she was only twelve years old.", "She never told anyone about it.", "Tilda stole the silver chalice from the temple of", "the drowned god when she was only twelve years old.", "told anyone about it."}},
		{"a line with no stop, the next in lower case: the line counts on its own",
			"## GM Notes (Secret)\nThe duke is secretly a vampire lord\nthe butler has known it for years\n",
			[]string{"The duke is secretly a vampire lord the butler has known it for years", "The duke is secretly a vampire lord", "the butler has known it for years"}},
		{"a blank line, a list marker and a heading end one",
			"## Secrets\nthe bell was cast from stolen silver\n\nthe abbot knows it and says nothing\n1. the mayor paid the smith in gold\n2) the smith drowned in the river after\n### Lower\nthe river keeps the bell at the ford\n",
			[]string{"the bell was cast from stolen silver", "the abbot knows it and says nothing", "the mayor paid the smith in gold", "the smith drowned in the river after", "the river keeps the bell at the ford"}},
		{"a break with no stop before a capital: each side counts too",
			"## Secrets\nLord Varn leads the cult\nThe miller is innocent of it\n",
			[]string{"Lord Varn leads the cult The miller is innocent of it", "Lord Varn leads the cult", "The miller is innocent of it"}},
		{"a quote",
			"## Secrets\n> The abbot rings the bell\n> every night at the drowned chapel.\n",
			[]string{"The abbot rings the bell every night at the drowned chapel.", "The abbot rings the bell", "every night at the drowned chapel."}},
		{"table rows, cell by cell",
			"## Secrets\n| the abbot rings the bell | every night at the chapel |\n| the miller is innocent here | of all of it, truly |\n",
			[]string{"the abbot rings the bell", "every night at the chapel", "the miller is innocent here", "of all of it, truly"}},
		{"a heading in a secret part is one of its lines",
			"## GM Notes (Secret)\n#### The abbot is a vampire who feeds on orphans\nHe hides it well.\n## Party\n#### The party rests at the inn tonight\n",
			[]string{"The abbot is a vampire who feeds on orphans", "He hides it well."}},
		{"the words after a fence's marks are a line of it",
			"## Secrets\n```The abbot is a vampire who feeds on orphans\nthe bell rings at midnight always\n```\n~~~ The miller is innocent of it all\n",
			[]string{"The abbot is a vampire who feeds on orphans", "the bell rings at midnight always", "The miller is innocent of it all"}},
		{"a thematic break and a fence end one",
			"## Secrets\nthe abbot rings the bell\n***\nevery night at the chapel\n```\nthe miller is innocent here\n```\n",
			[]string{"the abbot rings the bell", "every night at the chapel", "the miller is innocent here"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := secretSentences(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("secretSentences(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestSecretsWrappedGuard: a message holding eight words or more in a
// row of a secret sentence wrapped over two lines, across the break, or
// one line of it, is refused, naming the part the sentence is under by
// the line of its heading.
func TestSecretsWrappedGuard(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte("skills: [dnd-team]\ncampaign: c\nagents:\n  - gm\n  - {name: aria, role: player, character: tilda}\n  - {name: bram, role: player, character: corwin}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	party := filepath.Join(ws.Root, CampaignsDir, "c", "party")
	if err := os.MkdirAll(party, 0o755); err != nil {
		t.Fatal(err)
	}
	story := "# Story State\n\n## GM Notes (Secret)\n\n### Character Secrets\n\n- The old priest buried the bell beneath\n  the chapel floor before the flood came.\n\nThe duke is secretly a vampire lord\nthe butler has known it for years\n\n## Secret: Marla leads the cult\n\n- She poisoned the village well last night to frame the miller.\n"
	sheet := "# Tilda\n\n## Secrets\n\nTilda stole the silver chalice from the temple of\nthe drowned god when she was only twelve years old.\n"
	for path, text := range map[string]string{filepath.Join(ws.Root, CampaignsDir, "c", storyState): story, filepath.Join(party, "tilda.md"): sheet} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ to, body, part string }{
		{"aria", "Rumour: someone buried the bell beneath the chapel floor before the flood.", `(campaigns/c/story-state.md, the secret part at line 3)`},
		{"bram", "Gossip: a chalice from the temple of the drowned god when she was small.", `(campaigns/c/party/tilda.md, the secret part at line 3)`},
		// A line of a wrapped sentence, told on its own.
		{"aria", "The butler says: the duke is secretly a vampire lord!", `(campaigns/c/story-state.md, the secret part at line 3)`},
		// The part is named by its heading's line, never its words: a
		// heading may tell a secret too, and the reason is read at
		// players' seats.
		{"aria", "She poisoned the village well last night to frame the miller.", `(campaigns/c/story-state.md, the secret part at line 13)`},
	}
	for _, tt := range tests {
		m, err := mailbox.Parse([]byte("---\nto: " + tt.to + "\n---\n" + tt.body + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ws.checkSecrets(m, []string{tt.to})
		if err != nil {
			t.Fatal(err)
		}
		if r == nil || !strings.Contains(r.Reason, tt.part) || strings.Contains(r.Error(), "Marla") {
			t.Errorf("checkSecrets(%q) = %v; want it refused, naming %s and no words of a heading", tt.body, r, tt.part)
		}
	}
}

func FuzzSecretSentences(f *testing.F) {
	f.Add("## GM Notes (Secret)\n- The innkeeper poisoned the well last night.\n")
	f.Add("# Secrets\n| a | b c d e f |\n## next\ntext\n")
	f.Add("####### secret\n#secret\n## Secret\n\x00| |")
	f.Add("Secrets\n-------\n\nSel sings the drowned hymn every night.\nNext\n===\nshown here in the open\n")
	f.Add("---\ntitle: x\n---\nGM notes, secret\n=\n- a list item\n---\n```\nkey: four words here\n---\n```\n> q\n---\n")
	f.Add("## Secrets\n\n- The old priest buried the bell beneath\n  the chapel floor before the flood came.\n-\nlazy line\n1) Lord Varn leads\nThe cult\n> a quote\nlazy\n| a | b |\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range secretSentences(text) {
			if len(strings.Fields(normalise(s))) < 4 {
				t.Errorf("a sentence of under four words: %q", s)
			}
			if strings.Contains(s, "\n") {
				t.Errorf("a sentence with its line break left in: %q", s)
			}
		}
	})
}

func TestWithoutSecrets(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{
			name: "story state",
			text: "# Story\n\nAll is well.\n\n## GM Notes (Secret)\n\n### Hidden\n- The innkeeper poisoned the well.\n\n## Party Status\n\nEveryone is tired.\n",
			want: "# Story\n\nAll is well.\n\n## Party Status\n\nEveryone is tired.\n",
		},
		{
			name: "a sheet's secrets, last",
			text: "# Corwin\n\n## Character Voice (for AI players)\n\nGruff.\n\n## Secrets\n\nCorwin owes the river guild a thousand crowns.\n",
			want: "# Corwin\n\n## Character Voice (for AI players)\n\nGruff.\n",
		},
		{
			name: "a lower heading does not end the part",
			text: "## Secrets\n### Debts\n- a thousand crowns\n# Next\nshown\n",
			want: "# Next\nshown\n",
		},
		{
			name: "a setext heading, underlined with -",
			text: "# Sel\n\nHums.\n\nSecrets\n-------\n\nSel sings the drowned hymn every night.\n\nNotes\n---\nhidden: no underlined heading ends a part\n## Voice\nshown\n",
			want: "# Sel\n\nHums.\n\n## Voice\nshown\n",
		},
		{
			name: "a setext heading, underlined with =, its text two lines",
			text: "Intro.\n\nThe GM's\nsecret notes\n=\nThe well is poisoned.\n## Lower\nhidden too\n\n# Next\nshown\n",
			want: "Intro.\n\n# Next\nshown\n",
		},
		{
			name: "a thematic break ends no secret part",
			text: "## Secrets\n\n---\nhidden\n\n***\nhidden\n- a list item\n---\nhidden\n> a quote\n---\nhidden\n",
			want: "",
		},
		{
			name: "no heading in frontmatter or a code block",
			text: "---\ntitle: Secret\n---\nshown\n## Secrets\n```yaml\n# comment\nkey: value\n---\n```\nhidden\n",
			want: "---\ntitle: Secret\n---\nshown",
		},
		{
			name: "a code fence never closed is no fence: the secret part under it is hidden",
			text: "# Tor\n```\nnotes\n## Secrets\nTor stole the chalice.\n",
			want: "# Tor\n```\nnotes",
		},
		{
			name: "a line of a secret part over a rule stays secret (no heading ends the part)",
			text: "# Sheet\n\n## Secrets\nLord Varn is the cult leader.\n---\n## Inventory\nA rope.\n",
			want: "# Sheet\n\n## Inventory\nA rope.\n",
		},
		{
			name: "the lines around a part do not run together",
			text: "the secret plan\n# Secret\nhidden\n# Next\nshown\n",
			want: "the secret plan\n\n# Next\nshown\n",
		},
		{
			name: "no secret part",
			text: "# Tilda\n\nSecretive, but nothing under a heading says so.\n",
			want: "# Tilda\n\nSecretive, but nothing under a heading says so.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WithoutSecrets(tt.text); got != tt.want {
				t.Errorf("WithoutSecrets(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func FuzzWithoutSecrets(f *testing.F) {
	f.Add("## GM Notes (Secret)\n- The innkeeper poisoned the well last night.\n")
	f.Add("# Secrets\n| a | b c d e f |\n## next\ntext\n")
	f.Add("####### secret\n#secret\n## Secret\n\x00| |")
	f.Add("Secrets\n-------\n\nSel sings the drowned hymn every night.\nNext\n===\nshown here in the open\n")
	f.Add("---\ntitle: x\n---\nGM notes, secret\n=\n- a list item\n---\n```\nkey: four words here\n---\n```\n> q\n---\n")
	f.Add("the secret plan\n# Secret\nNext\n=\nfour words here now\n")
	f.Fuzz(func(t *testing.T, text string) {
		if got := secretSentences(WithoutSecrets(text)); len(got) > 0 {
			t.Errorf("WithoutSecrets(%q) keeps secrets %q", text, got)
		}
	})
}

// TestWithhold: what a spectator may read of a party's file holds no
// sentence of a secret, in a secret part or copied out of one.
func TestWithhold(t *testing.T) {
	ws := guardTable(t)
	sec, err := ws.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, text, want string }{
		{"a journal quoting its character's secret",
			"# Journal\n\n- We reached the inn.\n- The GM reminded me: Corwin still owes the Guild three hundred gold crowns.\n- Tilda sang.\n",
			"# Journal\n\n- We reached the inn.\n- Tilda sang.\n"},
		{"a secret broken over lines",
			"# Journal\n\nThe rain. Corwin still owes the Guild\nthree hundred gold crowns, he said.\n\nMorning came.\n",
			"# Journal\n\n\nMorning came.\n"},
		{"a secret part",
			"# Sheet\n\n## Secrets\n\nHe hates the river.\n\n## Notes\n\nLikes cats.\n",
			"# Sheet\n\n## Notes\n\nLikes cats.\n"},
		{"a list item over two lines, and one under it",
			"- We slept.\n- The GM reminded me: Corwin still owes the Guild three hundred\n  gold crowns.\n  - Tilda laughed.\n- Morning.\n",
			"- We slept.\n  - Tilda laughed.\n- Morning.\n"},
		{"nothing secret", "The party rests.\n", "The party rests.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sec.Withhold(tt.text); got != tt.want {
				t.Errorf("Withhold(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	var none *Secrets
	if got, want := none.Withhold("a\n## Secret\nb\n"), "a"; got != want {
		t.Errorf("nil Withhold = %q, want %q", got, want)
	}
}

// BenchmarkSecretsGuard measures what the secrets guard costs each
// message the router checks: a [GM_TO_PLAYER] of 1 KiB that carries no
// secret, to a player, against the fixture campaign's story-state.md and
// its three sheets. The campaign's files are unchanged between messages,
// as they are between most.
func BenchmarkSecretsGuard(b *testing.B) {
	ws := guardTable(b)
	sheets, _ := filepath.Glob(filepath.Join(fixtureCampaign, "party", "*.md"))
	for _, p := range sheets {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.Root, CampaignsDir, "rot", "party", filepath.Base(p)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	text := "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number: \"005\"\nscene_slug: the-warehouse-heist\n\n## Scene\n" +
		strings.Repeat("The rain keeps falling on the warehouse roof. ", 20) + "\n"
	m, err := mailbox.Parse([]byte(text[:1024]))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1024)
	for b.Loop() {
		if r, err := ws.checkSecrets(m, []string{"aria"}); err != nil || r != nil {
			b.Fatal(err, r)
		}
	}
}

// Telling a secret on purpose: the refusal said nothing of how, so a game
// master who meant to reveal it had no way. It says to move the sentence
// out of the secret part first, and once it is out, the same message
// goes. The Quote, for the sender, comes before that hint.
func TestSecretRevealedOnPurpose(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte("skills: [dnd-team]\ncampaign: c\nagents:\n  - gm\n  - {name: aria, role: player, character: tilda}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	dir := filepath.Join(ws.Root, CampaignsDir, "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	story := filepath.Join(dir, storyState)
	write := func(text string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(story, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(story, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	write("# Story\n\n## Current Situation\n\nThe party rests.\n\n## GM Notes (Secret)\n\n- The innkeeper poisoned the well last night.\n", then)
	m, err := mailbox.Parse([]byte("---\nto: aria\n---\nThe innkeeper poisoned the well last night.\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ws.checkSecrets(m, []string{"aria"})
	if err != nil || r == nil {
		t.Fatalf("checkSecrets = %v, %v; want refused", r, err)
	}
	hint := "; to tell it on purpose, first move the sentence out of the secret part (edit campaigns/c/story-state.md), then send the message again"
	if !strings.HasSuffix(r.Error(), hint) {
		t.Errorf("refusal = %q, want it to end %q", r.Error(), hint)
	}
	if want := `who may not know it: "The innkeeper poisoned the well last night."` + hint; !strings.HasSuffix(r.Quoted(), want) {
		t.Errorf("quoted = %q, want it to end %q", r.Quoted(), want)
	}
	// Moved out of the secret part, into the story's open part: told.
	write("# Story\n\n## Current Situation\n\nThe party rests.\n\n- The innkeeper poisoned the well last night.\n\n## GM Notes (Secret)\n\n- None yet.\n", then.Add(time.Second))
	if r, err := ws.checkSecrets(m, []string{"aria"}); err != nil || r != nil {
		t.Errorf("after the sentence left the secret part: checkSecrets = %v, %v; want it sent", r, err)
	}
}
