package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/parley-dev/parley/campaigns"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/internal/spell"
)

// sheetArg returns the path of the sheet of the character named by the
// first argument ("tilda-brannock"; "Tilda Brannock" works too), relative
// to the working directory when it is below it, so that errors name a
// file the user can open.
func sheetArg(c *cli.Context) (string, error) {
	if c.NArg() < 1 {
		return "", argsError(c, "%s needs the CHARACTER (the sheet's name, like tilda-brannock)", commandName(c))
	}
	camp, _, err := openCampaign(c, "")
	if err != nil {
		return "", err
	}
	if advice, ok := camp.Stray(c.Args().First()); ok {
		// A copy's file, "tilda-brannock (copy).md": named as it is.
		return "", fmt.Errorf("%s: %s", relToWD(camp.Path(campaigns.PartyDir, c.Args().First()+".md")), advice)
	}
	path, err := camp.Sheet(characterArg(c))
	if err != nil {
		return "", err
	}
	return relToWD(path), nil
}

// characterArg is the character the first argument names, as a sheet's
// name: "Tilda Brannock" is tilda-brannock.
func characterArg(c *cli.Context) string {
	return strings.ToLower(strings.Join(strings.Fields(c.Args().First()), "-"))
}

// relToWD is path relative to the working directory when it is below
// it, so that a message names a file the user can open.
func relToWD(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && filepath.IsLocal(r) {
			path = r
		}
	}
	return filepath.ToSlash(path)
}

// readSheet reads the sheet of the character named by the first argument.
func readSheet(c *cli.Context) (*sheet.Doc, string, error) {
	path, err := sheetArg(c)
	if err != nil {
		return nil, "", err
	}
	d, err := sheet.Read(path)
	if err != nil {
		return nil, "", err
	}
	return d, path, nil
}

// updateSheet changes the sheet of the character named by the first
// argument with change, and saves it (see sheet.Update: when another
// writer saved the sheet first, change runs again on what is there now).
func updateSheet(c *cli.Context, change func(d *sheet.Doc, path string) error) (*sheet.Doc, error) {
	path, err := sheetArg(c)
	if err != nil {
		return nil, err
	}
	return sheet.Update(path, func(d *sheet.Doc) error { return change(d, path) })
}

func characterCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "character",
		Usage: "read and change a character sheet (party/CHARACTER.md): only the changed values move",
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print what the sheet says: hit points, level, ability scores, items, money",
				ArgsUsage: "CHARACTER",
				Flags:     []cli.Flag{campaignFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 1, "the CHARACTER (the sheet's name, like tilda-brannock)"); err != nil {
						return err
					}
					path, err := sheetArg(c)
					if err != nil {
						return err
					}
					// A number the sheet writes that is not one: the
					// rest of the sheet is shown, that field marked,
					// and the error names its line.
					d, err := sheet.Inspect(path)
					if d == nil {
						return err
					}
					if perr := printSheet(e, d, path, c.Bool("json")); perr != nil {
						return perr
					}
					return err
				},
			},
			{
				Name:      "set",
				Usage:     "set values: hp=7 max_hp=14 temp_hp=3 level=2 str=16 ... gp=20 (all or nothing)",
				ArgsUsage: "CHARACTER KEY=VALUE...",
				Flags:     []cli.Flag{campaignFlag, asFlag},
				Action: func(c *cli.Context) error {
					if err := argCount(c, 2, -1, "the CHARACTER and at least one KEY=VALUE (hp=7)"); err != nil {
						return err
					}
					ws, who, err := openAsChanger(e, c)
					if err != nil {
						return err
					}
					type pair struct {
						key string
						n   int
					}
					var pairs []pair
					for _, kv := range c.Args().Slice()[1:] {
						k, v, ok := strings.Cut(kv, "=")
						n, err := strconv.Atoi(strings.TrimSpace(v))
						if !ok || err != nil {
							return usagef("%q: want KEY=NUMBER (hp=7)", kv)
						}
						pairs = append(pairs, pair{strings.ToLower(strings.TrimSpace(k)), n})
					}
					path, err := sheetArg(c)
					if err != nil {
						return err
					}
					// A value of a key set here that is not a number
					// ("three/8" for hp) is written over: setting it is
					// how a person mends it. was holds what it said.
					var said []string
					was := map[string]string{}
					mend := func(se *sheet.Error) (int, bool) {
						var nn *sheet.NotNumber
						errors.As(se, &nn)
						for _, p := range pairs {
							if k := setKey(p.key); k != "" && k == sheet.Key(se.Field) {
								was[p.key] = nn.Text
								return p.n, true
							}
						}
						return 0, false
					}
					d, err := sheet.Mend(path, mend, func(d *sheet.Doc) error {
						said = nil
						for _, p := range pairs {
							hp := d.HP
							before, err := setValue(d, p.key, p.n)
							if errors.Is(err, errUnknownKey) {
								return usagef("%s: %q: %v", path, p.key, err)
							}
							if err != nil {
								return err // names the sheet, the line and the field
							}
							if w, ok := was[p.key]; ok {
								said = append(said, fmt.Sprintf("%s %q -> %d", p.key, w, p.n))
							} else {
								said = append(said, fmt.Sprintf("%s %d -> %d", p.key, before, p.n))
							}
							if p.key != "hp" && d.HP != hp {
								said = append(said, fmt.Sprintf("hp %d -> %d", hp, d.HP))
							}
						}
						return nil
					})
					var nn *sheet.NotNumber
					if errors.As(err, &nn) && !nn.Mendable() {
						// Written in words, or in emphasis, a number set
						// over it would change what it says.
						return hintedError{err: err, hint: "parley cannot write a number over it: edit the line by hand (" + path + ")"}
					}
					if err != nil {
						return err
					}
					line := fmt.Sprintf("%s: %s", d.Name, strings.Join(said, ", "))
					fmt.Fprintln(e.stdout, line)
					// Written as update_character takes them (the
					// ability scores under stats); a key it has not
					// (gp) as the command took it.
					args := map[string]any{"character": characterArg(c)}
					stats := map[string]int{}
					for _, p := range pairs {
						if slices.Contains(sheet.AbilityNames[:], p.key) {
							stats[p.key] = p.n
							continue
						}
						args[p.key] = p.n
					}
					if len(stats) > 0 {
						args["stats"] = stats
					}
					journalTool(e, ws, who, "update_character", args, changed(line), nil)
					return nil
				},
			},
			hpCommand(e, "damage", "take N hit points off, temporary ones first (not below 0)"),
			hpCommand(e, "heal", "give N hit points back (not above the maximum)"),
			{
				Name:      "new",
				Usage:     "write a sheet for a new character (party/CHARACTER.md): the numbers the tools read at their starting values, and the parts a player fills in",
				ArgsUsage: "CHARACTER",
				Flags: []cli.Flag{campaignFlag,
					&cli.StringFlag{Name: "layout", Value: campaigns.LayoutMarkdown, Usage: "`LAYOUT` of the sheet: markdown (the numbers in tables, as people write sheets) or frontmatter (in YAML above the prose)"},
				},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 1, "the CHARACTER's full name in kebab-case (tilda-brannock)"); err != nil {
						return err
					}
					camp, _, err := openCampaign(c, "")
					if err != nil {
						return err
					}
					path, err := camp.NewSheet(c.Args().First(), c.String("layout"))
					if err != nil {
						return err
					}
					rel := filepath.Join(campaigns.Dir, camp.Name, campaigns.PartyDir, filepath.Base(path))
					fmt.Fprintf(e.stdout, "wrote %s\nnext: fill in who they are, then `parley character show %s`\n", rel, c.Args().First())
					return nil
				},
			},
		},
	}
}

// setKey returns the key of `character set` a key given to it names, as
// sheet.Key names a field: "max_hp" for "maxhp" and "max-hp", "str" for
// "STR"; "" for money and keys it does not know.
func setKey(key string) string {
	switch k := strings.ToLower(key); k {
	case "hp", "level":
		return k
	case "max_hp", "maxhp", "max-hp":
		return "max_hp"
	case "temp_hp", "temphp", "temp-hp":
		return "temp_hp"
	default:
		for _, a := range sheet.AbilityNames {
			if strings.EqualFold(a, k) {
				return k
			}
		}
	}
	return ""
}

// setValue sets one value of a sheet and returns what it was.
func setValue(d *sheet.Doc, key string, n int) (before int, err error) {
	switch k := setKey(key); k {
	case "hp":
		before = d.HP
		return before, d.SetHP(n)
	case "max_hp":
		before = d.MaxHP
		return before, d.SetMaxHP(n)
	case "temp_hp":
		before = d.TempHP
		return before, d.SetTempHP(n)
	case "level":
		before = d.Level
		return before, d.SetLevel(n)
	case "":
	default:
		for i, a := range sheet.AbilityNames {
			if strings.EqualFold(a, k) {
				before = d.Abilities[i]
				return before, d.SetAbility(k, n)
			}
		}
	}
	if dn := d.Denom(key); dn != "" {
		for _, c := range d.Currency {
			if c.Denom == dn {
				before = c.Amount
			}
		}
		return before, d.SetCurrency(dn, n)
	}
	return 0, unknownKey(d, key)
}

// errUnknownKey is the error, wrapped by unknownKey, for a key
// `character set` does not take.
var errUnknownKey = errors.New("unknown key")

// setKeys are the keys `character set` takes on any sheet; a currency of
// the setting's own (credits) is a key on a sheet that holds it.
var setKeys = []string{"hp", "max_hp", "temp_hp", "level", "str", "dex", "con", "int", "wis", "cha", "gp", "sp", "cp", "ep", "pp"}

// unknownKey returns the error for a key `character set` does not take
// on sheet d: the key it was nearest to (a misspelling: "levle"), the
// keys it takes, and the currencies of the setting's own this sheet
// holds, which it takes too (or that it holds none).
func unknownKey(d *sheet.Doc, key string) error {
	var held []string
	for _, c := range d.Currency {
		if k := strings.ReplaceAll(c.Denom, " ", "-"); !slices.Contains(setKeys, k) {
			held = append(held, k)
		}
	}
	keys := "keys: " + strings.Join(setKeys, ", ")
	if len(held) > 0 {
		keys += ", and the currencies this sheet holds: " + strings.Join(held, ", ")
	} else {
		keys += " (this sheet holds no other currency)"
	}
	edits := 2
	if len(key) <= 3 {
		edits = 1 // "xp" is as near to hp as to gp, sp...: no guess
	}
	if near := spell.Nearest(key, append(slices.Clone(setKeys), held...), edits); near != "" {
		return fmt.Errorf("%w (did you mean %s?); %s", errUnknownKey, near, keys)
	}
	return fmt.Errorf("%w; %s", errUnknownKey, keys)
}

func hpCommand(e *env, name, usage string) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "CHARACTER N",
		Flags:     []cli.Flag{campaignFlag, asFlag},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 2, "the CHARACTER and N"); err != nil {
				return err
			}
			n, err := strconv.Atoi(c.Args().Get(1))
			if err != nil || n < 0 {
				return usagef("N: %q is not a number of hit points", c.Args().Get(1))
			}
			ws, who, err := openAsChanger(e, c)
			if err != nil {
				return err
			}
			var from, to, temp int
			d, err := updateSheet(c, func(d *sheet.Doc, _ string) error {
				temp = d.TempHP
				change := d.Damage
				if name == "heal" {
					change = d.Heal
				}
				var err error
				from, to, err = change(n)
				return err
			})
			if err != nil {
				return err
			}
			said := fmt.Sprintf("%s: HP %d -> %d (of %d)", d.Name, from, to, d.MaxHP)
			if temp != d.TempHP {
				said = fmt.Sprintf("%s: temp HP %d -> %d, HP %d -> %d (of %d)", d.Name, temp, d.TempHP, from, to, d.MaxHP)
			}
			fmt.Fprintln(e.stdout, said)
			key := "damage" // update_character's argument
			if name == "heal" {
				key = "healing"
			}
			journalTool(e, ws, who, "update_character", map[string]any{"character": characterArg(c), key: n}, changed(said), nil)
			return nil
		},
	}
}

func printSheet(e *env, d *sheet.Doc, path string, asJSON bool) error {
	if asJSON {
		v := tools.View(d)
		v.Success = true
		return e.printJSON(v)
	}
	// A sheet is written by agents too: shown, never obeyed.
	w := textWriter{e.stdout}
	fmt.Fprintf(w, "%s (%s)\n", d.Name, path)
	if d.TempHP > 0 {
		fmt.Fprintf(w, "  HP     %d/%d, temp %d\n", d.HP, d.MaxHP, d.TempHP)
	} else {
		fmt.Fprintf(w, "  HP     %d/%d\n", d.HP, d.MaxHP)
	}
	unread := map[string]bool{} // fields whose number was not read (sheet.Inspect)
	for _, u := range d.Unreadable() {
		unread[u.Field] = true
	}
	invalid := map[string]bool{} // fields read out of range: said below
	for _, p := range d.Problems() {
		invalid[p.Field] = true
	}
	switch {
	case unread["level"]:
		fmt.Fprintf(w, "  level  ? (not a number: see below)\n")
	case d.Level != 0 || invalid["level"]:
		fmt.Fprintf(w, "  level  %d\n", d.Level)
	default:
		fmt.Fprintf(w, "  level  not on the sheet\n")
	}
	var abil []string
	written := d.Abilities != (sheet.Abilities{}) // or all 0, said invalid
	for i, a := range sheet.AbilityNames {
		written = written || invalid[a]
		switch {
		case invalid[a]:
			// A modifier of a score out of range means nothing.
			abil = append(abil, fmt.Sprintf("%s %d (?)", a, d.Abilities[i]))
		case d.Abilities[i] == 0:
			abil = append(abil, a+" -")
		default:
			abil = append(abil, fmt.Sprintf("%s %d (%+d)", a, d.Abilities[i], sheet.Modifier(d.Abilities[i])))
		}
	}
	if !written {
		abil = []string{"ability scores not on the sheet"}
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(abil, "  "))
	if len(d.Currency) > 0 {
		var coins []string
		for _, c := range d.Currency {
			coins = append(coins, fmt.Sprintf("%d %s", c.Amount, c.Denom))
		}
		fmt.Fprintf(w, "  money  %s\n", strings.Join(coins, ", "))
	}
	for _, n := range d.UnreadNotes(true) {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, p := range d.Problems() {
		if p.Field == "hit points" {
			fmt.Fprintf(w, "  invalid: %v: set it right with `parley character set %s hp=N` (or max_hp=N)\n", p, d.Name)
			continue
		}
		fmt.Fprintf(w, "  invalid: %v: set it right with `parley character set %s %s=N`\n", p, d.Name, campaigns.SetKeys(p.Field))
	}
	printItems(w, d)
	return nil
}

func printItems(w io.Writer, d *sheet.Doc) {
	if len(d.Items) == 0 {
		fmt.Fprintln(w, "  no items")
		return
	}
	fmt.Fprintln(w, "  items:")
	for _, it := range d.Items {
		// An item in another is indented under it, and named as
		// container/slug: the name that finds it when its slug alone is
		// in two packs.
		line := fmt.Sprintf("    %3d  %s%s", it.Quantity, strings.Repeat("  ", it.Depth), it.Name)
		if it.Note != "" {
			line += " — " + it.Note
		}
		fmt.Fprintf(w, "%s  (%s)\n", line, qualifiedSlug(it))
	}
}

// qualifiedSlug is the name an item goes by: its slug, after its
// container's ("explorers-pack/torches") when it is in one.
func qualifiedSlug(it sheet.Item) string {
	if it.In == "" {
		return it.Slug
	}
	return sheet.Slug(it.In) + "/" + it.Slug
}

// itemName is an item's name with its container: "torches in Explorer's
// pack".
func itemName(it sheet.Item) string {
	if it.In == "" {
		return it.Name
	}
	return it.Name + " in " + it.In
}

// inFlag says which item an item is in.
var inFlag = &cli.StringFlag{Name: "in", Usage: "the `CONTAINER` the item is in (explorers-pack), when items of its name are in several"}

func inventoryCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "inventory",
		Usage: "list, add and use a character's items",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the items on the sheet, with quantities",
				ArgsUsage: "CHARACTER",
				Flags:     []cli.Flag{campaignFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 1, "the CHARACTER (the sheet's name, like tilda-brannock)"); err != nil {
						return err
					}
					d, _, err := readSheet(c)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return e.printJSON(tools.View(d).Inventory)
					}
					printItems(textWriter{e.stdout}, d)
					return nil
				},
			},
			{
				Name:      "add",
				Usage:     "add an item (or more of one the sheet has)",
				ArgsUsage: "CHARACTER ITEM",
				Flags: []cli.Flag{campaignFlag,
					&cli.IntFlag{Name: "quantity", Aliases: []string{"n"}, Value: 1, Usage: "how `MANY`"},
					&cli.StringFlag{Name: "note", Usage: "a `NOTE` on the item (what it does)"},
					&cli.StringFlag{Name: "in", Usage: "put it in the item `CONTAINER` (explorers-pack): after its last item, indented like them"},
					asFlag,
				},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 2, "the CHARACTER and the ITEM (quote a name with spaces)"); err != nil {
						return err
					}
					if c.Int("quantity") < 1 {
						return usagef("--quantity: %d: add at least 1 (inventory use takes items away)", c.Int("quantity"))
					}
					ws, who, err := openAsChanger(e, c)
					if err != nil {
						return err
					}
					var it sheet.Item
					d, err := updateSheet(c, func(d *sheet.Doc, _ string) error {
						var err error
						it, err = d.AddItemTo(c.String("in"), c.Args().Get(1), c.Int("quantity"), c.String("note"))
						return err
					})
					if err != nil {
						return err
					}
					from := it.Quantity - c.Int("quantity")
					said := fmt.Sprintf("%s: %s %d -> %d", d.Name, itemName(it), from, it.Quantity)
					fmt.Fprintln(e.stdout, said)
					if note := c.String("note"); note != "" && from > 0 && it.Note != note {
						fmt.Fprintf(e.stdout, "the sheet had %s already: its note stays %q (edit the sheet to change it)\n", it.Name, it.Note)
					}
					item := tools.Item{Name: c.Args().Get(1), Description: c.String("note"), In: c.String("in")}
					if q := c.Int("quantity"); q != 1 {
						item.Quantity = &q
					}
					journalTool(e, ws, who, "add_inventory", tools.AddArgs{CharacterArgs: tools.CharacterArgs{Character: characterArg(c)}, Items: []tools.Item{item}}, changed(said), nil)
					return nil
				},
			},
			{
				Name:      "use",
				Usage:     "use up items: the quantity goes down; at 0 the item is gone",
				ArgsUsage: "CHARACTER ITEM",
				Flags: []cli.Flag{campaignFlag,
					&cli.IntFlag{Name: "quantity", Aliases: []string{"n"}, Value: 1, Usage: "how `MANY`"},
					inFlag,
					asFlag,
				},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 2, "the CHARACTER and the ITEM (quote a name with spaces)"); err != nil {
						return err
					}
					if c.Int("quantity") < 1 {
						return usagef("--quantity: %d: use at least 1 (inventory add gives items)", c.Int("quantity"))
					}
					ws, who, err := openAsChanger(e, c)
					if err != nil {
						return err
					}
					name := c.Args().Get(1)
					if in := strings.Trim(strings.TrimSpace(c.String("in")), "/"); in != "" {
						name = in + "/" + name
					}
					var it sheet.Item
					d, err := updateSheet(c, func(d *sheet.Doc, _ string) error {
						var err error
						it, err = d.ChangeItem(name, -c.Int("quantity"))
						return err
					})
					if err != nil {
						return err
					}
					from := it.Quantity + c.Int("quantity")
					said := fmt.Sprintf("%s: %s %d -> %d", d.Name, itemName(it), from, it.Quantity)
					if it.Quantity == 0 {
						said += ": gone from the sheet"
					}
					fmt.Fprintln(e.stdout, said)
					change := -c.Int("quantity")
					journalTool(e, ws, who, "update_inventory", tools.UpdateInventoryArgs{CharacterArgs: tools.CharacterArgs{Character: characterArg(c)}, Updates: []tools.Update{{Slug: qualifiedSlug(it), QuantityChange: &change}}}, changed(said), nil)
					return nil
				},
			},
		},
	}
}

func toolCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "tool",
		Usage: "call the game master's tools as a model does: JSON arguments in, a JSON result out",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "print the tools, with their arguments as JSON schemas",
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					return e.printJSON(tools.Tools())
				},
			},
			{
				Name:      "call",
				Usage:     "call a tool; the arguments come from ARGS or stdin; a failure prints {\"success\": false, ...} and exits 1",
				ArgsUsage: "TOOL [ARGS]",
				Flags: []cli.Flag{campaignFlag,
					&cli.StringFlag{Name: "character", Usage: "the `CHARACTER` a call that names none acts on"},
					&cli.Uint64Flag{Name: "seed", Usage: "roll_dice: roll with this `SEED`, for results that can be repeated"},
					asFlag,
				},
				Action: func(c *cli.Context) error {
					if err := argCount(c, 1, 2, "the TOOL, and its JSON ARGS (or stdin)"); err != nil {
						return err
					}
					args := []byte(c.Args().Get(1))
					if c.NArg() == 1 {
						var err error
						if args, err = io.ReadAll(e.stdin); err != nil {
							return err
						}
					}
					camp, ws, err := openCampaign(c, "")
					if err != nil {
						return err
					}
					who, err := changer(e, c, ws)
					if err != nil {
						return err
					}
					src := dice.Random()
					if c.IsSet("seed") {
						src = dice.Seeded(c.Uint64("seed"))
					}
					box := tools.New(camp, src)
					box.Character = c.String("character")
					res, err := box.Call(c.Context, c.Args().First(), args)
					// Journaled as a model's call is, a failed one too.
					journalTool(e, ws, who, c.Args().First(), json.RawMessage(args), res, err)
					if err != nil {
						if perr := e.printJSON(map[string]any{"success": false, "message": "Error: " + err.Error()}); perr != nil {
							return perr
						}
						return errSilent
					}
					return e.printJSON(res)
				},
			},
		},
	}
}
