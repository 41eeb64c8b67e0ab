package skills

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
// name.
type Library struct {
	skills map[string]*Skill
	// Shadowed lists the shipped skills a workspace file replaces.
	Shadowed []string
}

// ErrUnknownSkill is the error for a skill name no file defines.
var ErrUnknownSkill = errors.New("unknown skill")

// LoadLibrary reads the shipped skills and the *.md files of dir (which
// may be missing). Two files of dir naming the same skill is an error.
func LoadLibrary(dir string) (*Library, error) {
	l := &Library{skills: map[string]*Skill{}}
	files := Builtin()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := Parse("builtin:"+n, files[n])
		l.skills[s.Name] = s
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
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		s := Parse(path, data)
		if other, ok := local[s.Name]; ok {
			return nil, fmt.Errorf("%s and %s both define the skill %q: rename one (name: in its frontmatter)", other, path, s.Name)
		}
		local[s.Name] = path
		if old, ok := l.skills[s.Name]; ok && strings.HasPrefix(old.Source, "builtin:") {
			l.Shadowed = append(l.Shadowed, s.Name)
		}
		l.skills[s.Name] = s
	}
	return l, nil
}

// List returns every skill, sorted by name.
func (l *Library) List() []*Skill {
	out := make([]*Skill, 0, len(l.skills))
	for _, s := range l.skills {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the skill with this name.
func (l *Library) Get(name string) (*Skill, bool) {
	s, ok := l.skills[name]
	return s, ok
}

// Set returns the named skills as the protocol of a workspace. An unknown
// name, or a skill with errors, is an error that says which and why.
func (l *Library) Set(names []string) (*Set, error) {
	var chosen []*Skill
	for _, n := range names {
		s, ok := l.skills[n]
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
