package skills

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/parley-dev/parley/mailbox"
)

//go:embed builtin/*.md
var builtin embed.FS

// Builtin returns the skill files parley ships, by file name.
func Builtin() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := fs.ReadDir(builtin, "builtin") // the embedded directory is there by construction
	for _, e := range entries {
		data, err := fs.ReadFile(builtin, "builtin/"+e.Name())
		if err == nil {
			out[e.Name()] = data
		}
	}
	return out
}

// Library is every skill a workspace can use: the shipped ones, and the
// files in its skills/ directory, which replace shipped skills of the same
// name. A document is read (parsed into its schema) only when it is asked
// for: a command that checks messages against one skill does not pay for
// the others.
type Library struct {
	skills map[string]*entry
	// byFile finds a workspace skill by its file name without .md, so
	// that two documents that give themselves the same name (two
	// versions of one protocol) can each be named.
	byFile map[string]*entry
	// clash lists the names two workspace files both claim.
	clash map[string][]string
	// Shadowed lists the shipped skills a workspace file replaces.
	Shadowed []string
}

// entry is one skill document, read when it is first needed.
type entry struct {
	source string
	data   []byte
	name   string
	once   sync.Once
	skill  *Skill
}

// newEntry names a document by its frontmatter's name: without parsing
// the rest, when the frontmatter says it plainly; else by parsing it now.
func newEntry(source string, data []byte) *entry {
	e := &entry{source: source, data: data}
	if m, err := mailbox.Parse(data); err == nil && m.Tag == "" {
		if name, ok := m.Payload().Get("name"); ok && mailbox.CheckName(name) == nil {
			e.name = name
			return e
		}
	}
	e.name = e.get().Name
	return e
}

// get returns the skill, parsing the document the first time.
func (e *entry) get() *Skill {
	e.once.Do(func() { e.skill = Parse(e.source, e.data) })
	return e.skill
}

// ErrUnknownSkill is the error for a skill name no file defines.
var ErrUnknownSkill = errors.New("unknown skill")

// LoadLibrary finds the shipped skills and the *.md files of dir (which
// may be missing). Two files of dir naming the same skill is an error
// when that skill is asked for by name.
func LoadLibrary(dir string) (*Library, error) {
	l := &Library{skills: map[string]*entry{}, byFile: map[string]*entry{}, clash: map[string][]string{}}
	files := Builtin()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := newEntry("builtin:"+n, files[n])
		l.skills[e.name] = e
	}
	if dir == "" {
		return l, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	local := map[string]string{}
	for _, de := range entries {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".md") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, de.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		e := newEntry(path, data)
		l.byFile[strings.TrimSuffix(de.Name(), ".md")] = e
		if other, ok := local[e.name]; ok {
			if len(l.clash[e.name]) == 0 {
				l.clash[e.name] = []string{other}
			}
			l.clash[e.name] = append(l.clash[e.name], path)
			continue
		}
		local[e.name] = path
		if old, ok := l.skills[e.name]; ok && strings.HasPrefix(old.source, "builtin:") {
			l.Shadowed = append(l.Shadowed, e.name)
		}
		l.skills[e.name] = e
	}
	return l, nil
}

// List returns every skill, sorted by name (every file of a name several
// files claim).
func (l *Library) List() []*Skill {
	out := make([]*Skill, 0, len(l.skills))
	for name, e := range l.skills {
		if _, clash := l.clash[name]; !clash {
			out = append(out, e.get())
		}
	}
	for _, e := range l.byFile {
		if _, clash := l.clash[e.name]; clash {
			out = append(out, e.get())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Source < out[j].Source
	})
	return out
}

// Get returns the skill with this name, or in the workspace file of this
// name (without .md).
func (l *Library) Get(name string) (*Skill, bool) {
	if _, clash := l.clash[name]; !clash {
		if e, ok := l.skills[name]; ok {
			return e.get(), true
		}
	}
	e, ok := l.byFile[name]
	if !ok {
		return nil, false
	}
	return e.get(), true
}

// SameName returns the files of the workspace that call themselves by
// each name more than one of them gives, by that name: a copy of a skill
// (triage-v2.md of triage.md) left with the name of the original.
func (l *Library) SameName() map[string][]string {
	out := make(map[string][]string, len(l.clash))
	for name, files := range l.clash {
		out[name] = slices.Clone(files)
	}
	return out
}

// ErrSameName is the error for a skill asked for by a name several files
// of the workspace give themselves.
var ErrSameName = errors.New("several files call themselves")

// Set returns the named skills as the protocol of a workspace. An unknown
// name, or a skill with errors, is an error that says which and why. A
// name several files give themselves is an error naming them, even when
// one of them has that name as its file name: the copy of triage.md that
// is triage-v2.md, left with name: triage, would otherwise be listed as
// used while each edit to it did nothing.
func (l *Library) Set(names []string) (*Set, error) {
	var chosen []*Skill
	for _, n := range names {
		if files, clash := l.clash[n]; clash {
			var byFile []string
			for _, f := range files {
				if base := strings.TrimSuffix(filepath.Base(f), ".md"); base != n {
					byFile = append(byFile, base)
				}
			}
			hint := "give each its own name: in its frontmatter"
			if len(byFile) > 0 {
				hint += ", or name the one you mean by its file name (" + strings.Join(byFile, ", ") + ")"
			}
			return nil, fmt.Errorf("%w %q (%s): %s", ErrSameName, n, strings.Join(files, ", "), hint)
		}
		s, ok := l.Get(n)
		if !ok {
			known := make([]string, 0, len(l.skills))
			for k := range l.skills {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("%w %q (skills: %s)", ErrUnknownSkill, n, strings.Join(known, ", "))
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		chosen = append(chosen, s)
	}
	return NewSet(chosen...)
}
