package plans_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parley-dev/parley/plans"
)

func Example() {
	dir, _ := os.MkdirTemp("", "plans")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "small.md")
	os.WriteFile(path, []byte(`---
date: 2026-11-26
task: A small change
tier: 0
status: approved
---
## Summary
A small change.
## Out of Scope
None.
## Approach
Direct.
## Risks
None.
## Risk Tags
none
## Implementation Waves
### Wave 1 — All of it
- [ ] **Step 1: Change** — main.go: the change.
- [ ] **Step 2: Test** — main_test.go: a test of it.
## Acceptance Criteria
- AC1: it works.
`), 0o644)

	p, _ := plans.Read(path)
	fmt.Println("problems:", len(p.Check()))
	p, _, _ = plans.Tick(path, 1)
	pr := p.Progress()
	w, next := p.Next()
	fmt.Printf("%d/%d done; next: wave %d step %d\n", pr.Done, pr.Total, w.Number, next[0].Number)
	// Output:
	// problems: 0
	// 1/2 done; next: wave 1 step 2
}
