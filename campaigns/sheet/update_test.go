package sheet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/internal/textfile"
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

// A person appends to the sheet (echo >> tor.md) while Update writes it:
// their line lands after the new text was written and fsynced, before it
// is renamed into place. The rename used to put the text Update made
// from the sheet as read over their line; 5 to 9 appends in 400 were
// lost so. Update sees the file changed, starts again from it, and
// keeps both.
func TestUpdateKeepsAppendBeforeRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tor.md")
	text := "# Tor\n\n| **Hit Points** | 13/13 |\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	appended := 0
	textfile.BeforeRename = func(p string) {
		if p != path || appended > 0 {
			return
		}
		appended++
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("- a note written by hand\n"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { textfile.BeforeRename = nil })
	calls := 0
	if _, err := sheet.Update(path, func(d *sheet.Doc) error {
		calls++
		_, _, err := d.Damage(3)
		return err
	}); err != nil {
		t.Fatalf("Update = %v", err)
	}
	got, _ := os.ReadFile(path)
	want := "# Tor\n\n| **Hit Points** | 10/13 |\n- a note written by hand\n"
	if string(got) != want {
		t.Errorf("sheet = %q, want %q (the hand's line and the damage both)", got, want)
	}
	if calls != 2 {
		t.Errorf("change called %d times, want 2 (again after the hand's save)", calls)
	}
	if left, _ := filepath.Glob(path + ".*"); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
