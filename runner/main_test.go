package runner

import (
	"testing"

	"github.com/parley-dev/parley/internal/memtmp"
)

// TestMain runs the tests with their temporary directories in memory
// where it can (package memtmp): they sync every delivery.
func TestMain(m *testing.M) { memtmp.Main(m) }
