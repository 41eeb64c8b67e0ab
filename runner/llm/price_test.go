package llm_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestCostBudgetCounts: a cost budget counts the calls of a model priced
// by its name in parley.yaml, whatever name the endpoint answers with (a
// dated variant: the stand-in answers "stand-in"), and of a dated model
// priced by its undated name.
func TestCostBudgetCounts(t *testing.T) {
	for _, model := range []string{"gpt-4o", "gpt-4o-2024-08-06"} {
		t.Run(model, func(t *testing.T) {
			s := newStandin(t, step{Content: "ok", In: 1000000, Out: 0})
			cfg := fmt.Sprintf(`agents:
  - name: gm
    driver: openai
    openai: {base_url: %s, model: %s, max_retries: 0}
    budget: {cost: 2}
  - name: ann
    role: human
prices:
  gpt-4o: {input: 2.5, output: 10}
`, s.URL(), model)
			ws, err := workspace.InitConfig(t.TempDir(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			session := llm.NewSession("s1")
			a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Session: session})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); err != nil {
				t.Fatal(err)
			}
			if u := session.Agent("gm"); u.Cost != 2.5 {
				t.Errorf("session cost = %v, want 2.5", u.Cost)
			}
			if _, err := a.Handle(context.Background(), incoming(t, "Again.")); !errors.Is(err, llm.ErrBudget) {
				t.Errorf("Handle past the cost budget = %v, want ErrBudget", err)
			}
			if s.count() != 1 {
				t.Errorf("%d model calls, want 1", s.count())
			}
			r, err := ws.Usage()
			if err != nil {
				t.Fatal(err)
			}
			if r.Total.Cost != 2.5 {
				t.Errorf("usage from the journal: cost %v, want 2.5", r.Total.Cost)
			}
		})
	}
}
