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
	// byFile finds a workspace skill by its file name without .md, so
	// that two documents that give themselves the same name (two
	// versions of one protocol) can each be named.
	byFile map[string]*Skill
	// clash lists the names two workspace files both claim.
	clash map[string][]string
	// Shadowed lists the shipped skills a workspace file replaces.
	Shadowed []string
}

// ErrUnknownSkill is the error for a skill name no file defines.
var ErrUnknownSkill = errors.New("unknown skill")

// LoadLibrary reads the shipped skills and the *.md files of dir (which
// may be missing). Two files of dir naming the same skill is an error.
func LoadLibrary(dir string) (*Library, error) {
	l := &Library{skills: map[string]*Skill{}, byFile: map[string]*Skill{}, clash: map[string][]string{}}
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
		l.byFile[strings.TrimSuffix(e.Name(), ".md")] = s
		if other, ok := local[s.Name]; ok {
			l.clash[s.Name] = append(l.clash[s.Name], other, path)
			continue
		}
		local[s.Name] = path
		if old, ok := l.skills[s.Name]; ok && strings.HasPrefix(old.Source, "builtin:") {
			l.Shadowed = append(l.Shadowed, s.Name)
		}
		l.skills[s.Name] = s
	}
	return l, nil
}

// List returns every skill, sorted by name (every file of a name several
// files claim).
func (l *Library) List() []*Skill {
	out := make([]*Skill, 0, len(l.skills))
	for name, s := range l.skills {
		if _, clash := l.clash[name]; !clash {
			out = append(out, s)
		}
	}
	for _, s := range l.byFile {
		if _, clash := l.clash[s.Name]; clash {
			out = append(out, s)
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
		if s, ok := l.skills[name]; ok {
			return s, true
		}
	}
	s, ok := l.byFile[name]
	return s, ok
}

// Set returns the named skills as the protocol of a workspace. An unknown
// name, or a skill with errors, is an error that says which and why.
func (l *Library) Set(names []string) (*Set, error) {
	var chosen []*Skill
	for _, n := range names {
		if files, clash := l.clash[n]; clash {
			if s, ok := l.byFile[n]; ok {
				chosen = append(chosen, s)
				continue
			}
			return nil, fmt.Errorf("several files call themselves %q (%s): name the one you mean by its file name", n, strings.Join(files, ", "))
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
