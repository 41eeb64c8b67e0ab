package campaigns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Sheet layouts NewSheet writes.
const (
	LayoutMarkdown    = "markdown"    // the numbers in markdown tables, as people write sheets
	LayoutFrontmatter = "frontmatter" // the numbers in YAML frontmatter above the prose
)

// NewSheet writes a sheet skeleton for a new character into party/: the
// numbers every tool reads (hit points, level, ability scores, money, an
// Equipment part) at their starting values, and the prose parts a player
// fills in. It refuses a name that is not kebab-case and a sheet that
// exists, and returns the sheet's path.
func (c *Campaign) NewSheet(character, layout string) (string, error) {
	if err := ValidName(character); err != nil {
		return "", fmt.Errorf("character %w", err)
	}
	var text string
	switch layout {
	case LayoutMarkdown, "":
		text = fmt.Sprintf(markdownSheet, Title(character), Title(c.Name))
	case LayoutFrontmatter:
		text = fmt.Sprintf(frontmatterSheet, Title(character), Title(c.Name))
	default:
		return "", fmt.Errorf("layout %q: want %s or %s", layout, LayoutMarkdown, LayoutFrontmatter)
	}
	path := c.SheetPath(character)
	if _, err := os.Stat(path); err == nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(PartyDir, character+".md"), fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return path, nil
}

const markdownSheet = `# %s

**Campaign**: %s

## Basic Information

| | |
|---|---|
| **Race** | |
| **Class** | |
| **Level** | 1 |

## Ability Scores

| STR | DEX | CON | INT | WIS | CHA |
|:---:|:---:|:---:|:---:|:---:|:---:|
| 10 | 10 | 10 | 10 | 10 | 10 |
| +0 | +0 | +0 | +0 | +0 | +0 |

## Combat Stats

| | |
|---|---|
| **Armor Class** | 10 |
| **Hit Points** | 8/8 |
| **Speed** | 30 ft |

## Equipment

### Worn/Carried

### Currency
- 10 gp

## Personality

> Who they are, what they want, what they fear.

## Backstory

## Character Voice (for AI players)

> How they speak: what an AI player reads before it answers as them.
`

const frontmatterSheet = `---
hp: 8
max_hp: 8
level: 1
abilities: {str: 10, dex: 10, con: 10, int: 10, wis: 10, cha: 10}
inventory: []
currency: {gp: 10}
---
# %s

**Campaign**: %s

## Personality

> Who they are, what they want, what they fear.

## Backstory

## Character Voice (for AI players)

> How they speak: what an AI player reads before it answers as them.
`
