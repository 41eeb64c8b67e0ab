package workspace

import (
	"errors"
	"strings"
	"testing"
)

// TestCostBudgetUnpriced: a cost budget for a model prices: does not
// list (a typo, a model renamed) counted every call at 0 and never
// stopped the agent, with no word of it (tryout). It is an error of
// parley.yaml, naming the line, the model and what prices: lists.
func TestCostBudgetUnpriced(t *testing.T) {
	agent := func(model, budget string) string {
		return "agents:\n  - name: you\n    role: human\n  - name: bot\n    driver: openai\n    openai:\n      model: " + model + "\n" + budget
	}
	for _, tt := range []struct {
		name, yaml string
		want       string // the error, "" for none
	}{
		{"typo", agent("m1", "    budget:\n      cost: 0.01\n") + "prices:\n  gpt-m1: {input: 5, output: 15}\n",
			"parley.yaml:9: agents[1].budget.cost: no price for the model: bot calls m1, which prices: does not list (line 11 lists gpt-m1; did you mean gpt-m1?): its calls would count 0 against its cost budget, which would never stop it; price m1 in prices: (m1: {input: ..., output: ...}, per million tokens), or give the budget in tokens"},
		{"misspelt", agent("gpt-4o", "    budget: {cost: 1}\n") + "prices:\n  gpt-4:  {input: 30, output: 60}\n  gtp-4o: {input: 5, output: 15}\n",
			"parley.yaml:8: agents[1].budget.cost: no price for the model: bot calls gpt-4o, which prices: does not list (line 10 lists gpt-4, gtp-4o; did you mean gpt-4 or gtp-4o?)"},
		{"no prices", agent("m1", "    budget:\n      cost: 0.01\n"),
			"parley.yaml:9: agents[1].budget.cost: no price for the model: bot calls m1, which prices: does not list (parley.yaml has no prices:)"},
		{"the session's", agent("m1", "") + "budget: {tokens: 100, cost: 2}\nprices:\n  m2: {input: 1, output: 1}\n",
			"parley.yaml:8: budget.cost: no price for the model: bot calls m1, which prices: does not list (line 10 lists m2; did you mean m2?): its calls would count 0 against the session's cost budget"},
		{"a tokens budget needs no price", agent("m1", "    budget: {tokens: 1000}\n") + "budget: {tokens: 100}\n", ""},
		{"priced", agent("m1", "    budget: {cost: 1}\n") + "prices:\n  m1: {input: 0, output: 0}\n", ""},
		{"a dated variant of a priced model", agent("gpt-4o-2024-08-06", "    budget: {cost: 1}\n") + "prices:\n  gpt-4o: {input: 2.5, output: 10}\n", ""},
		{"another model is not a variant", agent("gpt-4o-mini", "    budget: {cost: 1}\n") + "prices:\n  gpt-4o: {input: 2.5, output: 10}\n",
			"(line 10 lists gpt-4o): its calls"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig(ConfigFile, []byte(tt.yaml))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("ParseConfig = %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrUnpriced)):
				t.Errorf("ParseConfig = %v, want ErrUnpriced saying\n%s", err, tt.want)
			}
		})
	}
}

// TestPriceOf: a model is priced by its own name, else by the longest
// priced name it extends with a version; never by another model's.
func TestPriceOf(t *testing.T) {
	cfg := &Config{Prices: map[string]Price{
		"gpt-4o": {Input: 2.5}, "gpt-4o-mini": {Input: 0.15}, "claude-3-5-sonnet": {Input: 3}, "gpt-4": {Input: 30},
	}}
	for _, tt := range []struct {
		model string
		want  float64 // the input price; -1: none
	}{
		{"gpt-4o", 2.5},
		{"gpt-4o-2024-08-06", 2.5},
		{"gpt-4o-latest", 2.5},
		{"gpt-4o-mini", 0.15},
		{"gpt-4o-mini-2024-07-18", 0.15},
		{"gpt-4-0613", 30},
		{"claude-3-5-sonnet-20241022", 3},
		{"claude-3-5-sonnet@20241022", 3},
		{"gpt-4o-audio-preview", -1},
		{"gpt-4-turbo", -1},
		{"gpt-4o2", -1},
		{"o1", -1},
	} {
		p, ok := cfg.PriceOf(tt.model)
		got := p.Input
		if !ok {
			got = -1
		}
		if got != tt.want {
			t.Errorf("PriceOf(%q) = %v, %v; want input %v", tt.model, p, ok, tt.want)
		}
	}
}
