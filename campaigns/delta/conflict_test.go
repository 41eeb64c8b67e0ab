package delta_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parley-dev/parley/campaigns/delta"
	"github.com/parley-dev/parley/internal/textfile"
)

// A delta is not applied to a target git left a merge conflict in: the
// target is not written, the delta is kept.
func TestApplyConflict(t *testing.T) {
	story := "# Story State\n\n## Open Threads\n<<<<<<< HEAD\n- the bell\n=======\n- the cult\n>>>>>>> other\n"
	d := "THREAD_OPEN: the missing ferryman\n"
	dir := campaign(t, map[string]string{"story-state.md": story, "tmp/gm-state-delta.md": d})
	_, err := delta.Apply(context.Background(), dir, delta.Options{})
	if !errors.Is(err, textfile.ErrConflict) {
		t.Errorf("Apply = %v, want ErrConflict", err)
	}
	if got := read(t, dir, "story-state.md"); got != story {
		t.Errorf("story-state.md was written:\n%s", got)
	}
	if got := read(t, dir, "tmp/gm-state-delta.md"); got != d {
		t.Errorf("the delta = %q, want it kept as it was", got)
	}
}
