package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestServeStoreFull: the store of a server run in process (parley run
// --serve) on a disk nearly full when it started: publishes were refused
// (503 insufficient resources, or no answer after "no space left on
// device") and kept being refused after room was made, until the process
// was restarted, while its log and status said nothing. The server says
// its store is out of room (log and state, with the directory and what
// to do); once room is made, a server started again over the same store,
// as the person told restarts it, takes what waited: nothing is lost.
func TestServeStoreFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small disk (tmpfs) needs root")
	}
	for _, tc := range []struct {
		name string
		// before fills the disk before the server starts (its store's
		// limit is 3/4 of what is free then), after once it runs.
		before, after int
	}{
		{"limit", 12 << 20, 0},
		{"disk", 4 << 20, 16 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) { storeFull(t, tc.before, tc.after) })
	}
}

func storeFull(t *testing.T, before, after int) {
	disk := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16M", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", disk).Run() })
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, before), 0o644); err != nil {
		t.Fatal(err)
	}
	var logged lockedBuffer
	store := filepath.Join(disk, "nats")
	ns, err := Serve(ServeOptions{Dir: store, Listen: "127.0.0.1:0", Name: "full", Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Shutdown() }()
	url := ns.ClientURL()
	inn, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: home}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	home, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n", url))
	if err != nil {
		t.Fatal(err)
	}
	// inn is the hub: its bridge runs beside the server, in its process
	// (Options.Server), and is started again with it.
	ctx, cancel := context.WithCancel(context.Background())
	innCtx, innCancel := context.WithCancel(ctx)
	errc, innErr := make(chan error, 1), make(chan error, 1)
	go func() { _, err := runBridge(t, innCtx, inn, Options{Server: ns}); innErr <- err }()
	go func() { _, err := runBridge(t, ctx, home, Options{}); errc <- err }()
	defer func() {
		cancel()
		for _, c := range []chan error{errc, innErr} {
			if err := <-c; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}()

	if after > 0 {
		// Once the stream is made, the disk fills: the write stops at
		// the last byte, as it should.
		js := streamClient(t, url)
		waitFor(t, "the stream", func() bool { _, err := js.Stream(ctx, "PARLEY"); return err == nil })
		_ = os.WriteFile(filepath.Join(disk, "filler2"), make([]byte, after), 0o644)
	}

	// aria, in home, writes eight messages of 600 KiB to gm, in inn: the
	// store has room for five.
	s, err := mailbox.NewSyncer(home.Root)
	if err != nil {
		t.Fatal(err)
	}
	var ids mailbox.IDs
	body := strings.Repeat("m", 600<<10)
	for i := range 8 {
		id := ids.New("aria")
		data := fmt.Sprintf("---\nid: %s\nfrom: aria\nto: [gm]\n---\n%s %d\n", id, body, i)
		if _, err := home.Mailbox("gm").Deliver(id, []byte(data), s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	defer func() {
		if t.Failed() {
			st, _, _ := inn.ReadBridgeState()
			t.Logf("inn's state: %+v\nits log:\n%s", st, logged.String())
		}
	}()
	waitFor(t, "the hub's state saying its store is out of room", func() bool {
		st, ok, _ := inn.ReadBridgeState()
		return ok && strings.HasPrefix(st.StoreFull, store+": ")
	})
	if !strings.Contains(logged.String(), "store is out of room") || !strings.Contains(logged.String(), store) {
		t.Errorf("the hub's log does not say its store %s is out of room:\n%s", store, logged.String())
	}
	if n, _ := home.Mailbox("gm").Count(mailbox.Inbox); n == 0 {
		t.Fatalf("every message went through: the store was not full")
	}

	if st, _, _ := inn.ReadBridgeState(); !strings.Contains(st.StoreFull, "restart parley run --serve") && !strings.Contains(st.StoreFull, store) {
		t.Errorf("the state's store full = %q", st.StoreFull)
	}
	if !strings.Contains(logged.String(), "make room there, then restart parley run --serve") {
		t.Errorf("the hub's log does not say what to do:\n%s", logged.String())
	}

	// Room is made and the server started again over the same store, on
	// the same address: what waited goes through.
	os.Remove(filepath.Join(disk, "filler2"))
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	innCancel()
	if err := <-innErr; err != nil {
		t.Errorf("Run: %v", err)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	ns, err = Serve(ServeOptions{Dir: store, Listen: strings.TrimPrefix(url, "nats://"), Name: "full"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, err := runBridge(t, ctx, inn, Options{Server: ns}); innErr <- err }()
	waitFor(t, "the eight messages in inn", func() bool {
		n, _ := inn.Mailbox("gm").Count(mailbox.Inbox)
		return n == 8
	})
}
