package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/bridge"
)

// TestStatusStoreFull: the NATS store of a hub (parley run --serve) ran
// out of room, and publishes were refused, while parley status said
// nothing of it. It says the store is out of room, where, and that the
// server takes what is published again once room is made and it is
// restarted.
func TestStatusStoreFull(t *testing.T) {
	dir := t.TempDir()
	ws := newWorkspace(t, dir, "bridge: {name: hub, url: nats://127.0.0.1:4222}\nagents: [gm]\n")
	// A bridge runs: it holds the workspace's bridge lock.
	b, err := bridge.Open(ws, bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	state := `{"pid": 1, "name": "hub", "url": "in process", "connected": true, "serving": "nats://0.0.0.0:4222", "updated": "2026-11-20T10:00:00Z",` +
		` "lag": 3, "lag_stale": true, "store_full": "/srv/hub/.parley/nats: no space left on the disk"}`
	if err := os.WriteFile(ws.BridgeStatePath(), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runInProcess(context.Background(), []string{"parley", "-C", dir, "status"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("parley status = exit %d: %s", code, stderr.String())
	}
	// Connected, but the stream did not answer its last count (its
	// JetStream out of room, or starting): the count before is stale.
	if !strings.Contains(stdout.String(), "; lag not known: the stream did not answer the bridge's last count\n") {
		t.Errorf("parley status gives a lag the bridge could not count:\n%s", stdout.String())
	}
	want := "          NATS store OUT OF ROOM: /srv/hub/.parley/nats: no space left on the disk; the server refuses what the workspaces publish (it waits in their inboxes): make room there, then restart parley run --serve\n"
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("parley status does not say the store is out of room:\n%s", stdout.String())
	}
}
