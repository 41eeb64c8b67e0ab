// Package tools is the game master's toolbox: the five tools of the GM tool
// protocol — roll_dice, add_inventory, update_inventory, update_character
// and get_character_stats — acting on a campaign's character sheets. A
// tool is called by name with JSON arguments and answers a JSON result, as
// an LLM's tool call is. A tool that fails returns an error, which callers
// feed back to the model as {"success": false, "message": "Error: ..."},
// and leaves every file as it was: the changes of one call are made to
// the sheet in memory and saved once, all or nothing.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/internal/toolargs"
)

// Errors callers branch on.
var (
	ErrUnknownTool = errors.New("unknown tool")
	ErrArguments   = toolargs.ErrBad
	ErrWhich       = errors.New("which character?")
	ErrNotYours    = errors.New("not your character")
)

// Box runs the tools on one campaign.
type Box struct {
	Campaign *campaigns.Campaign
	// Character is the character a call means when it names none and the
	// campaign has several (the human's character, say); may be empty.
	Character string
	// Own, when set, is the only character the calls may change: a
	// player's agent changes its own sheet, not the others'. Reading
	// (get_character_stats) and rolling are not limited.
	Own string

	mu   sync.Mutex // guards dice
	dice dice.Source
}

// New returns a toolbox for a campaign, rolling with src.
func New(c *campaigns.Campaign, src dice.Source) *Box {
	return &Box{Campaign: c, dice: src}
}

// Tool describes a tool for a model: its name, what it does, and its
// arguments as a JSON schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Tools lists the tools, in the protocol's order.
func Tools() []Tool {
	return []Tool{
		{"roll_dice", "Roll dice for a check, an attack or damage, in dice notation (1d20+5, 2d20kh1+3, 8d6); with a dc, say whether it succeeds.",
			json.RawMessage(`{"type":"object","properties":{"dice":{"type":"string","description":"dice notation, like 1d20+5"},"reason":{"type":"string","description":"what the roll is for"},"dc":{"type":"integer","description":"difficulty class, for a check"}},"required":["dice","reason"]}`)},
		{"add_inventory", "Give a character new items, optionally into an item that holds others (a pack).",
			json.RawMessage(`{"type":"object","properties":{"character":{"type":"string"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string"},"quantity":{"type":"integer","minimum":1},"in":{"type":"string","description":"the item to put it in, like explorers-pack; left out: carried, or added to the one item of that name"}},"required":["name"]}}},"required":["items"]}`)},
		{"update_inventory", "Change the quantities of a character's items: a negative change uses them up; an item at 0 is gone.",
			json.RawMessage(`{"type":"object","properties":{"character":{"type":"string"},"updates":{"type":"array","items":{"type":"object","properties":{"slug":{"type":"string","description":"the item's name in kebab case, like healing-potion; explorers-pack/torch for the torch in the explorer's pack"},"in":{"type":"string","description":"the item it is in, like explorers-pack, when items of that name are in several"},"quantityChange":{"type":"integer"}},"required":["slug","quantityChange"]}}},"required":["updates"]}`)},
		{"update_character", "Change a character's hit points (set hp, or give damage or healing), maximum hit points, temporary hit points (tempHp, which damage takes first), level or ability scores.",
			json.RawMessage(`{"type":"object","properties":{"character":{"type":"string"},"hp":{"type":"integer"},"maxHp":{"type":"integer"},"tempHp":{"type":"integer","minimum":0,"description":"temporary hit points, set to this (they do not add up: 0 takes them away); given with damage, they are set first"},"level":{"type":"integer"},"stats":{"type":"object","properties":{"str":{"type":"integer"},"dex":{"type":"integer"},"con":{"type":"integer"},"int":{"type":"integer"},"wis":{"type":"integer"},"cha":{"type":"integer"}}},"damage":{"type":"integer","minimum":0,"description":"hit points lost, temporary hit points (tempHp) first; hp stops at 0"},"healing":{"type":"integer","minimum":0,"description":"hit points regained; hp stops at maxHp"}}}`)},
		{"get_character_stats", "Read a character's sheet: hit points, level, ability scores, inventory and money.",
			json.RawMessage(`{"type":"object","properties":{"character":{"type":"string"}}}`)},
	}
}

// ReadOnly reports whether a tool changes no file: roll_dice and
// get_character_stats. The others change a character's sheet.
func ReadOnly(name string) bool {
	return name == "roll_dice" || name == "get_character_stats"
}

// Call runs a tool with its JSON arguments and returns its result, to be
// encoded as JSON.
//
// Its errors name the campaign's files from the campaign's directory
// ("party/tilda-brannock.md:28: ..."), as a model is shown them.
func (b *Box) Call(ctx context.Context, name string, args json.RawMessage) (any, error) {
	res, err := b.call(name, args)
	return res, b.Campaign.Short(err)
}

func (b *Box) call(name string, args json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	switch name {
	case "roll_dice":
		var a RollArgs
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return answer(b.roll(a))
	case "add_inventory":
		var a AddArgs
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return answer(b.add(a))
	case "update_inventory":
		var a UpdateInventoryArgs
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return answer(b.updateInventory(a))
	case "update_character":
		var a UpdateCharacterArgs
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return answer(b.updateCharacter(a))
	case "get_character_stats":
		var a CharacterArgs
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return answer(b.stats(a))
	}
	names := make([]string, 0, 5)
	for _, t := range Tools() {
		names = append(names, t.Name)
	}
	return nil, fmt.Errorf("%q: %w (tools: %s)", name, ErrUnknownTool, strings.Join(names, ", "))
}

// answer returns a tool's result, or a nil result with its error: not a
// nil pointer in a non-nil interface.
func answer[T any](r *T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decode reads arguments strictly: an argument the tool does not know is
// an error the model can correct. Its errors wrap ErrArguments.
func decode(args json.RawMessage, dst any) error { return toolargs.Decode(args, dst) }

// CharacterArgs name the character a tool acts on.
type CharacterArgs struct {
	Character string `json:"character,omitempty"`
}

// RollArgs are roll_dice's arguments.
type RollArgs struct {
	Dice      string `json:"dice"`
	Reason    string `json:"reason"`
	DC        *int64 `json:"dc,omitempty"`
	Character string `json:"character,omitempty"` // said in the result, not used
}

// RollResult is roll_dice's result.
type RollResult struct {
	Dice        string `json:"dice"`
	Reason      string `json:"reason"`
	Rolls       []int  `json:"rolls"`    // the kept dice
	Modifier    int64  `json:"modifier"` // the total less the kept dice
	Total       int64  `json:"total"`
	Roll        string `json:"roll"` // in the protocol's notation: 1d20+5 = [13]+5 = 18
	DC          *int64 `json:"dc,omitempty"`
	Outcome     string `json:"outcome,omitempty"` // success, failure, critical_success, critical_failure
	Description string `json:"description"`
}

func (b *Box) roll(a RollArgs) (*RollResult, error) {
	if strings.TrimSpace(a.Dice) == "" {
		return nil, fmt.Errorf("%w: dice: missing (like 1d20+5)", ErrArguments)
	}
	b.mu.Lock()
	res, err := dice.Roll(a.Dice, b.dice)
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := &RollResult{Dice: res.Expr, Reason: a.Reason, Total: res.Total, Roll: res.Roll, DC: a.DC, Rolls: []int{}}
	var kept int64
	for _, t := range res.Terms {
		for _, d := range t.Dice {
			if d.Kept {
				out.Rolls = append(out.Rolls, d.Value)
				kept += int64(d.Value)
			}
		}
	}
	out.Modifier = res.Total - kept
	reason := a.Reason
	if reason == "" {
		reason = "a roll"
	}
	out.Description = fmt.Sprintf("Rolled %s for %s: %s", res.Expr, reason, strings.TrimPrefix(res.Roll, res.Expr+" = "))
	if a.DC != nil {
		out.Outcome = string(res.Against(*a.DC))
		out.Description += fmt.Sprintf(" vs DC %d: %s", *a.DC, out.Outcome)
	}
	return out, nil
}

// Item is an item given to a character.
type Item struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Quantity    *int   `json:"quantity,omitempty"` // default 1
	In          string `json:"in,omitempty"`       // the item to put it in (explorers-pack); "" for none
}

// AddArgs are add_inventory's arguments.
type AddArgs struct {
	CharacterArgs
	Items []Item `json:"items"`
}

// InventoryResult is what add_inventory and update_inventory answer.
type InventoryResult struct {
	Success   bool     `json:"success"`
	Message   string   `json:"message"`
	Character string   `json:"character"`
	Changes   []Change `json:"changes"`
	Notes     []string `json:"notes,omitempty"` // what was not done as asked, and why
}

// Change is an item's quantity before and after.
type Change struct {
	Name string `json:"name"`
	Slug string `json:"slug"`
	In   string `json:"in,omitempty"` // the item it is in
	From int    `json:"from"`
	To   int    `json:"to"`
}

func (b *Box) add(a AddArgs) (*InventoryResult, error) {
	if len(a.Items) == 0 {
		return nil, fmt.Errorf("%w: items: give at least one", ErrArguments)
	}
	res := &InventoryResult{Success: true}
	err := b.edit(a.Character, &res.Character, func(d *sheet.Doc) error {
		res.Changes, res.Notes = nil, nil // made again when another writer saved first
		for i, it := range a.Items {
			q := 1
			if it.Quantity != nil {
				q = *it.Quantity
			}
			if strings.TrimSpace(it.Name) == "" || q < 1 {
				return fmt.Errorf("%w: items[%d]: a name and a quantity of 1 or more", ErrArguments, i)
			}
			got, err := d.AddItemTo(it.In, it.Name, q, it.Description)
			if err != nil {
				return fmt.Errorf("items[%d] %q: %w", i, it.Name, err)
			}
			if it.Description != "" && got.Quantity > q && got.Note != it.Description {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: the sheet has the item already; its note stays %q", got.Name, got.Note))
			}
			// The sheet matched the name singular or plural alike, so the
			// quantity before is what the change added to.
			res.Changes = append(res.Changes, Change{Name: got.Name, Slug: got.Slug, In: got.In, From: got.Quantity - q, To: got.Quantity})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Message = describe(res.Character, res.Changes)
	for _, n := range res.Notes {
		res.Message += " (" + n + ")"
	}
	return res, nil
}

// Update is one change of update_inventory.
type Update struct {
	Slug           string `json:"slug"`         // or container/slug: explorers-pack/torch
	In             string `json:"in,omitempty"` // the item it is in, when items of that name are in several
	QuantityChange *int   `json:"quantityChange"`
}

// UpdateInventoryArgs are update_inventory's arguments.
type UpdateInventoryArgs struct {
	CharacterArgs
	Updates []Update `json:"updates"`
}

func (b *Box) updateInventory(a UpdateInventoryArgs) (*InventoryResult, error) {
	if len(a.Updates) == 0 {
		return nil, fmt.Errorf("%w: updates: give at least one", ErrArguments)
	}
	res := &InventoryResult{Success: true}
	err := b.edit(a.Character, &res.Character, func(d *sheet.Doc) error {
		res.Changes = nil // made again when another writer saved first
		for i, u := range a.Updates {
			if u.QuantityChange == nil || *u.QuantityChange == 0 {
				return fmt.Errorf("%w: updates[%d]: quantityChange: give a change other than 0 (-1 uses one up)", ErrArguments, i)
			}
			name := u.Slug
			if in := strings.Trim(strings.TrimSpace(u.In), "/"); in != "" {
				name = in + "/" + name
			}
			got, err := d.ChangeItem(name, *u.QuantityChange)
			if err != nil {
				return fmt.Errorf("updates[%d] %q: %w", i, u.Slug, err)
			}
			// ChangeItem finds "dagger" in "Two daggers" and "potion" in
			// "Healing potion": the quantity before is the one after less
			// the change, not what an exact slug would find.
			res.Changes = append(res.Changes, Change{Name: got.Name, Slug: got.Slug, In: got.In, From: got.Quantity - *u.QuantityChange, To: got.Quantity})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Message = describe(res.Character, res.Changes)
	return res, nil
}

func describe(character string, changes []Change) string {
	var parts []string
	for _, c := range changes {
		name := c.Name
		if c.In != "" {
			name += " in " + c.In
		}
		switch {
		case c.To == 0:
			parts = append(parts, fmt.Sprintf("%s: used up", name))
		default:
			parts = append(parts, fmt.Sprintf("%s %d -> %d", name, c.From, c.To))
		}
	}
	return character + ": " + strings.Join(parts, "; ")
}

// UpdateCharacterArgs are update_character's arguments; what is left out
// does not change.
type UpdateCharacterArgs struct {
	CharacterArgs
	HP      *int           `json:"hp,omitempty"`
	MaxHP   *int           `json:"maxHp,omitempty"`
	MaxHP2  *int           `json:"max_hp,omitempty"` // the same, as the sheets write it
	TempHP  *int           `json:"tempHp,omitempty"`
	TempHP2 *int           `json:"temp_hp,omitempty"` // the same, as the sheets write it
	Level   *int           `json:"level,omitempty"`
	Stats   map[string]int `json:"stats,omitempty"` // str, dex, con, int, wis, cha
	Damage  *int           `json:"damage,omitempty"`
	Healing *int           `json:"healing,omitempty"`
}

// CharacterResult is what update_character and get_character_stats
// answer: the character as the sheet now says.
type CharacterResult struct {
	Success   bool           `json:"success"`
	Message   string         `json:"message,omitempty"`
	Name      string         `json:"name"`
	HP        int            `json:"hp"`
	MaxHP     int            `json:"maxHp"`
	TempHP    int            `json:"tempHp,omitempty"` // temporary hit points, which damage takes first
	Level     int            `json:"level,omitempty"`  // left out when the sheet does not say
	Stats     map[string]int `json:"stats"`            // the ability scores the sheet gives
	Inventory []InventoryRow `json:"inventory"`
	Currency  map[string]int `json:"currency"`
	Unread    []string       `json:"unread,omitempty"`  // what of the sheet could not be read
	Invalid   string         `json:"invalid,omitempty"` // what the sheet reads but cannot stand by (hit points above the maximum, a level or ability score out of range), each naming its line; "; " between
}

// InventoryRow is an item a character holds.
type InventoryRow struct {
	Name     string `json:"name"`
	Slug     string `json:"slug"`
	Quantity int    `json:"quantity"`
	Section  string `json:"section,omitempty"`
	Note     string `json:"note,omitempty"`
	In       string `json:"in,omitempty"` // the item it is in: "Explorer's pack"
}

func (b *Box) updateCharacter(a UpdateCharacterArgs) (*CharacterResult, error) {
	if a.MaxHP == nil {
		a.MaxHP = a.MaxHP2
	}
	if a.TempHP == nil {
		a.TempHP = a.TempHP2
	}
	var said []string
	var result *CharacterResult
	err := b.edit(a.Character, nil, func(d *sheet.Doc) error {
		said = nil // made again when another writer saved first
		if a.MaxHP != nil {
			if err := d.SetMaxHP(*a.MaxHP); err != nil {
				return err
			}
			said = append(said, fmt.Sprintf("max HP %d", *a.MaxHP))
		}
		if a.HP != nil {
			if err := d.SetHP(*a.HP); err != nil {
				return err
			}
			said = append(said, fmt.Sprintf("HP -> %d", *a.HP))
		}
		if a.TempHP != nil {
			// As `parley character set temp_hp=N` sets them: the sheet
			// decides where and how they are written.
			temp := d.TempHP
			if err := d.SetTempHP(*a.TempHP); err != nil {
				return err
			}
			said = append(said, fmt.Sprintf("temp HP %d -> %d", temp, *a.TempHP))
		}
		if a.Damage != nil {
			temp := d.TempHP
			from, to, err := d.Damage(*a.Damage)
			if err != nil {
				return err
			}
			if temp > 0 {
				said = append(said, fmt.Sprintf("%d damage: temp HP %d -> %d, HP %d -> %d", *a.Damage, temp, d.TempHP, from, to))
			} else {
				said = append(said, fmt.Sprintf("%d damage: HP %d -> %d", *a.Damage, from, to))
			}
		}
		if a.Healing != nil {
			from, to, err := d.Heal(*a.Healing)
			if err != nil {
				return err
			}
			said = append(said, fmt.Sprintf("healed %d: HP %d -> %d", *a.Healing, from, to))
		}
		if a.Level != nil {
			if err := d.SetLevel(*a.Level); err != nil {
				return err
			}
			said = append(said, fmt.Sprintf("level %d", *a.Level))
		}
		keys := make([]string, 0, len(a.Stats))
		for k := range a.Stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := d.SetAbility(k, a.Stats[k]); err != nil {
				return err
			}
			said = append(said, fmt.Sprintf("%s %d", strings.ToUpper(k), a.Stats[k]))
		}
		if len(said) == 0 {
			return fmt.Errorf("%w: nothing to change: give hp, maxHp, tempHp, level, stats, damage or healing", ErrArguments)
		}
		result = View(d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	result.Success = true
	result.Message = result.Name + ": " + strings.Join(said, ", ")
	return result, nil
}

func (b *Box) stats(a CharacterArgs) (*CharacterResult, error) {
	path, err := b.sheetPath(a.Character)
	if err != nil {
		return nil, err
	}
	d, err := sheet.Read(path)
	if err != nil {
		return nil, err
	}
	r := View(d)
	if d.Invalid != nil {
		r.Invalid = b.Campaign.Short(d.Invalid).Error() // as Call's errors name files
	}
	r.Success = true
	return r, nil
}

// View is a sheet as get_character_stats answers it.
func View(d *sheet.Doc) *CharacterResult {
	r := &CharacterResult{Name: d.Name, HP: d.HP, MaxHP: d.MaxHP, TempHP: d.TempHP, Level: d.Level, Stats: map[string]int{}, Inventory: []InventoryRow{}, Currency: map[string]int{}}
	for i, n := range sheet.AbilityNames {
		if d.Abilities[i] != 0 { // 0: not on the sheet
			r.Stats[strings.ToLower(n)] = d.Abilities[i]
		}
	}
	for _, it := range d.Items {
		r.Inventory = append(r.Inventory, InventoryRow{Name: it.Name, Slug: it.Slug, Quantity: it.Quantity, Section: it.Section, Note: it.Note, In: it.In})
	}
	for _, c := range d.Currency {
		r.Currency[c.Denom] = c.Amount
	}
	r.Unread = d.Unread
	if d.Invalid != nil {
		r.Invalid = d.Invalid.Error()
	}
	return r
}

// edit reads a character's sheet, changes it with fn and saves it, or
// saves nothing when fn fails. The character's name is put in *who.
func (b *Box) edit(character string, who *string, fn func(*sheet.Doc) error) error {
	path, err := b.sheetPath(character)
	if err != nil {
		return err
	}
	if b.Own != "" && path != b.Campaign.SheetPath(b.Own) {
		return fmt.Errorf("%w: this caller plays %s, and may change only that sheet", ErrNotYours, b.Own)
	}
	// sheet.Update takes turns with every other writer of the sheet.
	_, err = sheet.Update(path, func(d *sheet.Doc) error {
		if who != nil {
			*who = d.Name
		}
		return fn(d)
	})
	return err
}

// sheetPath finds the sheet of the character a call names, or of the only
// (or default) character.
func (b *Box) sheetPath(character string) (string, error) {
	if character == "" {
		character = b.Character
	}
	if character == "" {
		all, err := b.Campaign.Characters()
		if err != nil {
			return "", err
		}
		if len(all) != 1 {
			return "", fmt.Errorf("%w: name one in the character argument (characters: %s)", ErrWhich, strings.Join(all, ", "))
		}
		character = all[0]
	}
	return b.Campaign.Sheet(strings.ToLower(strings.ReplaceAll(strings.TrimSpace(character), " ", "-")))
}

// Journaled returns what the journal (parley log) keeps of a call of
// tool that answered result (JSON text): update_character's and
// get_character_stats's answer is the whole sheet, items and money
// included, so the journal keeps what the call did or asked, in
// {"success": true, "message": ...} as the commands journal their
// changes ("tilda-brannock: HP 14 -> 7"; for a read, the hit points and
// level read: "Tilda: read: HP 7 of 14, level 2"). The arguments are
// journaled beside it. The other tools' answers say only what the call
// did, and are kept as they are, as is a result that is not such an
// answer.
func Journaled(tool, result string) string {
	if tool != "update_character" && tool != "get_character_stats" {
		return result
	}
	var r CharacterResult
	if err := json.Unmarshal([]byte(result), &r); err != nil || !r.Success {
		return result
	}
	msg := r.Message
	if tool == "get_character_stats" || msg == "" {
		msg = fmt.Sprintf("%s: read: HP %d of %d", r.Name, r.HP, r.MaxHP)
		if r.TempHP > 0 {
			msg += fmt.Sprintf(", temp HP %d", r.TempHP)
		}
		if r.Level > 0 {
			msg += fmt.Sprintf(", level %d", r.Level)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "HP 14 -> 7", not "-\u003e"
	if err := enc.Encode(struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}{true, msg}); err != nil {
		return result
	}
	return strings.TrimSuffix(b.String(), "\n")
}
