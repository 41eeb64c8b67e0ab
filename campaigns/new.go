package campaigns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// New makes a campaign in the workspace: every file of the layout, each
// with the sections the tools expect and a line on what goes there, the
// empty directories (kept in git by a .gitkeep), and a .gitignore for
// tmp/. It refuses a name that is not kebab-case and a campaign that
// exists.
func New(workspace, name string) (*Campaign, error) {
	if err := ValidName(name); err != nil {
		return nil, fmt.Errorf("campaign %w", err)
	}
	c := &Campaign{Name: name, Root: filepath.Join(workspace, Dir, name)}
	if _, err := os.Stat(c.Root); err == nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(Dir, name), ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// Made in a directory beside the final one, then renamed into place:
	// an interrupted scaffold leaves no half campaign behind.
	staging := filepath.Join(workspace, Dir, "."+name+".new")
	if err := os.RemoveAll(staging); err != nil {
		return nil, err
	}
	for rel, content := range layout(name) {
		path := filepath.Join(staging, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			os.RemoveAll(staging)
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(staging, TmpDir), 0o755); err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	if err := os.Rename(staging, c.Root); err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	if err := mailbox.SyncDir(filepath.Join(workspace, Dir)); err != nil {
		return nil, err
	}
	return c, nil
}

// layout returns the files of a new campaign, by path relative to its
// directory: every file of the layout with its sections, a .gitkeep in
// each directory, and the .gitignore of tmp/.
func layout(name string) map[string]string {
	title := Title(name)
	files := map[string]string{
		Overview:       fmt.Sprintf(overviewTemplate, title),
		WorldPrimer:    fmt.Sprintf(worldPrimerTemplate, title),
		StoryState:     fmt.Sprintf(storyStateTemplate, title),
		PartyKnowledge: fmt.Sprintf(partyKnowledgeTemplate, title),
		Preferences:    fmt.Sprintf(preferencesTemplate, title),
		DecisionLog:    fmt.Sprintf(decisionLogTemplate, title),
		".gitignore":   "# Transient files: deltas waiting to be applied, scratch work.\n/" + TmpDir + "/\n",
	}
	for _, d := range append([]string{PartyDir, ScenesDir}, NoteDirs...) {
		files[filepath.Join(d, ".gitkeep")] = ""
	}
	return files
}

// Fill writes the files of the layout that the campaign lacks (a
// story-state.md removed by hand, say), as New writes them, and the
// directories it lacks: a file that is there is never touched, whatever
// it holds. It returns the paths written, relative to the campaign, in
// order.
func (c *Campaign) Fill() ([]string, error) {
	files := layout(c.Name)
	paths := make([]string, 0, len(files))
	for rel := range files {
		paths = append(paths, rel)
	}
	slices.Sort(paths)
	var wrote []string
	for _, rel := range paths {
		dir := filepath.Dir(rel)
		if filepath.Base(rel) == ".gitkeep" {
			// A directory that is there needs no keep file.
			if _, err := os.Lstat(c.Path(dir)); err == nil {
				continue
			}
		}
		path := c.Path(rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return wrote, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return wrote, err
		}
		_, err = f.WriteString(files[rel])
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return wrote, err
		}
		if err := mailbox.SyncDir(filepath.Dir(path)); err != nil {
			return wrote, err
		}
		wrote = append(wrote, filepath.ToSlash(rel))
	}
	if err := os.MkdirAll(c.Path(TmpDir), 0o755); err != nil {
		return wrote, err
	}
	return wrote, nil
}

// Title turns a kebab-case name into words with capitals: the-rot-beneath
// is "The Rot Beneath".
func Title(name string) string {
	words := strings.Split(name, "-")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

const overviewTemplate = `# %s

> What the campaign is about, in a page: read by everyone at the table.

## Setting

**World**:
**Starting Location**:

## Tone & Themes

**Tone**:

## The Hook

## Major Factions
`

const worldPrimerTemplate = `# World Primer: %s

> What any character would know of the world: places, powers, customs.
`

const storyStateTemplate = `# Story State: %s

> **Last Updated**: Campaign Start
>
> The GM's file. Players never read it: what they know is in party-knowledge.md.

## Current Situation

**Location**:
**Time**:
**Immediate Context**:

## Active Quests

## Party Status

**Hit Points**:

**Conditions/Effects**:
- None

## Recent Events Summary

## Unresolved Threads

## NPC Relationships

---

## GM Notes (Secret)

### Hidden Information

### Character Secrets

### Upcoming Planned Events

### Consequences Pending
`

const partyKnowledgeTemplate = `# Party Knowledge

**Campaign**: %s
**Last Updated**: Session 0

> What the whole party knows. Players read this file; what is not here (or
> in a character's own journal) their characters do not know.

## Current Situation

**Location**:
**Time**:
**What's happening**:

## Active Quests

## NPCs We've Met

## Locations We've Visited

## Important Information Learned

## Party Resources

**Gold**:

**Notable Items**:

## Recent Session Summary

## Unresolved Questions
`

const preferencesTemplate = `# Campaign Preferences: %s

> How this table likes to play: read when a session starts.

## Narrative Style

**dialogue_format**: hybrid

## Player Character

**name**:
**file**:

## Session Preferences

**auto_save**: true
`

const decisionLogTemplate = `# Decision Log: %s

> The choices that shaped the story, newest last: what was decided, by whom,
> and what it changed.
`
