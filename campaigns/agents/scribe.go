package agents

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// Scribe appends the story to the campaign's scene files: every
// [NARRATIVE], and the prose the narrators send (anything from them but a
// [NARRATOR_REQUEST], which is a question for the GM). The scene is the one
// the message names (scene_number and scene_slug, or current_scene:
// "005 - the-warehouse-heist"), else the one being told; location and time
// fields go into the scene's frontmatter. It answers nothing.
type Scribe struct {
	Campaigns
	// Narrators are the agents whose prose is the story.
	Narrators []string
}

// currentSceneRE reads a current_scene field: "005 - the-warehouse-heist",
// and as people write it, "Scene 4: The Docks", "#3 The Sewers!".
var currentSceneRE = regexp.MustCompile(`(?i)^\s*(?:scene\s*)?#?\s*(\d+)\s*[-–—:.]?\s*(.*)$`)

// Handle appends one message's prose.
func (s *Scribe) Handle(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, error) {
	_, err := s.file(in)
	return nil, err
}

// HandleNoted appends one message's prose, as Handle does, and says
// where it went and why, for the journal's line of the message: "filed
// in campaigns/c/scenes/002-the-mill.md (no scene number or slug: the
// scene told in last)". A gm who left out scene_number and scene_slug
// learns which scene the narrative went to. It says nothing of a message
// it keeps nothing of.
func (s *Scribe) HandleNoted(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, string, error) {
	note, err := s.file(in)
	return nil, note, err
}

// file appends one message's prose, and says where and why.
func (s *Scribe) file(in *mailbox.Message) (string, error) {
	typ := typeOf(in)
	from, _ := in.Header().Get("from")
	narrator := slices.Contains(s.Narrators, from)
	if typ != "NARRATIVE" && (!narrator || typ == "NARRATOR_REQUEST") {
		return "", nil // not story: nothing to keep
	}
	if err := sceneFields(in); err != nil {
		return "", err
	}
	camp, err := s.For(in)
	if err != nil {
		return "", err
	}
	e := scenes.Entry{
		Slug:     campaigns.Kebab(field(in, "scene_slug")),
		Location: field(in, "location"),
		Time:     field(in, "time"),
		Text:     string(in.Body),
	}
	e.ID, _ = in.Header().Get("id")
	if n := field(in, "scene_number"); n != "" {
		num, err := strconv.Atoi(n)
		if err != nil || num < 1 {
			return "", fmt.Errorf("scene_number: %q is not a scene number (like 005)", n)
		}
		e.Number = num
	}
	if cs := field(in, "current_scene"); cs != "" && e.Number == 0 && e.Slug == "" {
		m := currentSceneRE.FindStringSubmatch(cs)
		if m == nil {
			return "", fmt.Errorf("current_scene: %q names no scene number (like 005 - the-warehouse)", cs)
		}
		num, err := strconv.Atoi(m[1])
		if err != nil || num < 1 {
			return "", fmt.Errorf("current_scene: %q: %q is not a scene number", cs, m[1])
		}
		e.Number, e.Slug = num, campaigns.Kebab(m[2])
	}
	f, err := scenes.File(camp.Path(campaigns.ScenesDir), e)
	if errors.Is(err, scenes.ErrNothingToTell) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	path := f.Path
	if rel, err := filepath.Rel(s.Workspace, f.Path); err == nil {
		path = rel
	}
	if !f.Added {
		return fmt.Sprintf("in %s already (%s)", path, f.Why), nil
	}
	return fmt.Sprintf("filed in %s (%s)", path, f.Why), nil
}

// characterOf returns the character a message is about: its character
// field, else the one its sender plays.
func characterOf(in *mailbox.Message, players map[string]string) string {
	if c := field(in, "character"); c != "" {
		return strings.ToLower(strings.ReplaceAll(c, " ", "-"))
	}
	from, _ := in.Header().Get("from")
	return players[from]
}

// sceneFields refuses the fields naming a scene that name none, by the
// rule the protocol's check holds them to (skills.ShapeProblem: a list
// where one number goes, a slug holding a path): read as they come (the
// list as no number, ../../x as x) they made a scene of their own, which
// took the number of the real scene that followed. The check refuses
// them in a typed message; a narrator's prose may have no type.
func sceneFields(in *mailbox.Message) error {
	for _, k := range []string{"scene_number", "scene_slug"} {
		if why := skills.ShapeProblem(k, in.Payload().Value(k)); why != "" {
			return fmt.Errorf("%s: %s", k, why)
		}
	}
	switch in.Payload().Value("current_scene").(type) {
	case []any, map[string]any:
		return errors.New("current_scene: a list or a map is no scene: name it as 005 - the-warehouse")
	}
	return nil
}
