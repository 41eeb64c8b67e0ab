package bridge

import (
	"os"
	"testing"

	"github.com/parley-dev/parley/internal/memtmp"
)

// TestMain runs the tests with their temporary directories in memory
// where it can (package memtmp): they sync every delivery.
func TestMain(m *testing.M) {
	cleanup := memtmp.Use()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
