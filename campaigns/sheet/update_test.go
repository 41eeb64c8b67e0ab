package sheet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// Writers changing one sheet at once all get their change in: none is
// lost, none fails.
func TestUpdateConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mira-voss.md")
	text := "# Mira\n\n| **Hit Points** | 20/20 |\n\n## Equipment\n\n### Pack Contents\n- 3 torches\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := sheet.Update(path, func(d *sheet.Doc) error {
				_, err := d.AddItem(fmt.Sprintf("Token %c", 'a'+i), 1, "")
				return err
			})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := sheet.Update(path, func(d *sheet.Doc) error {
				_, _, err := d.Damage(1)
				return err
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	d, err := sheet.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if d.HP != 20-n {
		t.Errorf("HP = %d, want %d: a damage was lost", d.HP, 20-n)
	}
	if len(d.Items) != n+1 {
		t.Errorf("%d items, want %d: an item was lost\n%s", len(d.Items), n+1, d.Bytes())
	}
	if left, _ := filepath.Glob(path + ".*"); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A change that fails saves nothing, and Update says why.
func TestUpdateFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mira-voss.md")
	text := "| **Hit Points** | 5/5 |\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sheet.Update(path, func(d *sheet.Doc) error {
		if _, _, err := d.Damage(2); err != nil {
			return err
		}
		return d.SetHP(9)
	})
	if err == nil {
		t.Fatal("Update with a failing change succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != text {
		t.Errorf("the sheet changed:\n%s", got)
	}
}
