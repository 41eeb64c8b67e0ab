package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// netns is a set of network namespaces a test made, removed at cleanup.
type netns struct {
	t     *testing.T
	names []string
}

func (n *netns) ip(args ...string) {
	n.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// host makes a namespace joined to hub by a veth pair: the host gets
// 10.77.N.2, the hub's end 10.77.N.1.
func (n *netns) host(hub, name string, subnet int) string {
	n.ip("netns", "add", name)
	n.names = append(n.names, name)
	here, there := fmt.Sprintf("pv%d-%d", subnet, os.Getpid()%10000), fmt.Sprintf("ph%d-%d", subnet, os.Getpid()%10000)
	n.ip("link", "add", here, "type", "veth", "peer", "name", there)
	n.ip("link", "set", here, "netns", name)
	n.ip("link", "set", there, "netns", hub)
	n.ip("-n", name, "addr", "add", fmt.Sprintf("10.77.%d.2/24", subnet), "dev", here)
	n.ip("-n", hub, "addr", "add", fmt.Sprintf("10.77.%d.1/24", subnet), "dev", there)
	n.ip("-n", name, "link", "set", "lo", "up")
	n.ip("-n", name, "link", "set", here, "up")
	n.ip("-n", hub, "link", "set", there, "up")
	return there
}

// proc is a parley process in a namespace.
type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

func startIn(t *testing.T, ns, parley string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, parley}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &stderr}
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	return p
}

func (p *proc) stop(sig syscall.Signal) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(sig)
	p.cmd.Wait()
}

// TestBridgeAcrossHosts: two workspaces and a NATS server on three hosts
// (network namespaces joined by veth pairs). Three agents send a stream
// of messages across while a workspace's runner (and its bridge) is
// killed with SIGKILL and started again, a host's link is cut for three
// seconds and healed, and the server is killed and started again. Every
// message reaches every recipient exactly once, and each recipient gets
// each sender's messages in the order they were sent.
func TestBridgeAcrossHosts(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("the fault test across network namespaces takes about 8s")
	}
	h := threeHosts(t, "parley-")
	n, parley, hub, hostA, hostB, linkA := h.netns, h.parley, h.hub, h.a, h.b, h.linkA

	root := t.TempDir()
	mk := func(dir, config string) *workspace.Workspace {
		ws, err := workspace.InitConfig(filepath.Join(root, dir), config)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	mk("hub", "bridge: {name: hub, url: nats://127.0.0.1:4222}\n")
	wsA := mk("a", "bridge: {name: a, url: nats://10.77.1.1:4222}\nagents:\n  - a1\n  - a2\n  - {name: b1, remote: b}\n  - {name: b2, remote: b}\n")
	wsB := mk("b", "bridge: {name: b, url: nats://10.77.2.1:4222}\nagents:\n  - {name: a1, remote: a}\n  - {name: a2, remote: a}\n  - b1\n  - b2\n")

	serve := func() *proc {
		return startIn(t, hub, parley, "-C", filepath.Join(root, "hub"), "bridge", "--serve", "--listen", "0.0.0.0:4222", "--quiet")
	}
	run := func(ns string, ws *workspace.Workspace) *proc {
		return startIn(t, ns, parley, "-C", ws.Root, "run", "--quiet")
	}
	server := serve()
	runA, runB := run(hostA, wsA), run(hostB, wsB)

	// The stream: a1 and a2 (in a) write to b1 and b2, b1 (in b) to a1
	// and a2, one message each every 20 ms (6 s).
	const perSender = 300
	senders := []struct {
		ws       *workspace.Workspace
		from, to string
	}{{wsA, "a1", "[b1, b2]"}, {wsA, "a2", "[b1, b2]"}, {wsB, "b1", "[a1, a2]"}}
	sent := make([][]string, len(senders))
	var wg sync.WaitGroup
	for i, s := range senders {
		wg.Go(func() {
			var gen mailbox.IDs
			for k := range perSender {
				id := gen.New(s.from)
				m, err := mailbox.Parse(fmt.Appendf(nil, "---\nid: %s\nto: %s\n---\n%s says %d\n", id, s.to, s.from, k))
				if err != nil {
					t.Error(err)
					return
				}
				if _, _, err := s.ws.Mailbox(s.from).Post(m); err != nil {
					t.Error(err)
					return
				}
				sent[i] = append(sent[i], id)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}

	// The faults, while the stream flows.
	time.Sleep(600 * time.Millisecond)
	runA.stop(syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
	runA = run(hostA, wsA)
	time.Sleep(500 * time.Millisecond)
	n.ip("-n", hub, "link", "set", linkA, "down")
	time.Sleep(3 * time.Second)
	n.ip("-n", hub, "link", "set", linkA, "up")
	time.Sleep(300 * time.Millisecond)
	server.stop(syscall.SIGKILL)
	time.Sleep(300 * time.Millisecond)
	server = serve()
	wg.Wait()

	// Every copy arrives.
	want := map[string]int{"b1": 2 * perSender, "b2": 2 * perSender, "a1": perSender, "a2": perSender}
	deadline := time.Now().Add(40 * time.Second)
	for {
		missing := ""
		for agent, n := range want {
			ws := wsB
			if strings.HasPrefix(agent, "a") {
				ws = wsA
			}
			if got, _ := ws.Mailbox(agent).Count(mailbox.Inbox); got != n {
				missing += fmt.Sprintf(" %s holds %d of %d;", agent, got, n)
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			for name, p := range map[string]*proc{"a": runA, "b": runB, "hub": server} {
				p.stop(syscall.SIGINT) // its stderr is written no more: read it
				t.Logf("%s said:\n%s", name, p.stderr)
			}
			st, _ := os.ReadFile(wsA.BridgeStatePath())
			t.Logf("a's bridge: %s", st)
			st, _ = os.ReadFile(wsB.BridgeStatePath())
			t.Logf("b's bridge: %s", st)
			t.Fatalf("not every message arrived within 40s:%s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range []*proc{runA, runB, server} {
		p.stop(syscall.SIGINT)
	}

	// Exactly once: each recipient holds each message once, nothing
	// was given up, and the remote agents' copies were all forwarded.
	for i, s := range senders {
		for _, to := range strings.Split(strings.Trim(s.to, "[]"), ", ") {
			ws := wsA
			if s.ws == wsA {
				ws = wsB
			}
			got, err := ws.Mailbox(to).IDs(mailbox.Inbox)
			if err != nil {
				t.Fatal(err)
			}
			var mine []string
			for _, id := range got {
				if _, from, _ := mailbox.ParseID(id); from == s.from {
					mine = append(mine, id)
				}
			}
			if !slices.Equal(mine, sent[i]) {
				t.Errorf("%s holds %d of %s's %d messages (or others)", to, len(mine), s.from, len(sent[i]))
			}
			for _, st := range []string{mailbox.Cur, mailbox.Done, mailbox.Dead} {
				if n, _ := ws.Mailbox(to).Count(st); n != 0 {
					t.Errorf("%s holds %d in %s/", to, n, st)
				}
			}
			if n, _ := s.ws.Mailbox(to).Count(mailbox.Inbox); n != 0 {
				t.Errorf("%s's copies: %d not forwarded from %s", to, n, filepath.Base(s.ws.Root))
			}
		}
	}
	// In order: the journal of the receiving side says in which order
	// each message first arrived.
	for _, ws := range []*workspace.Workspace{wsA, wsB} {
		first := map[string][]string{} // "from -> to": ids in order of arrival
		seen := map[string]bool{}
		again := 0
		f, err := os.Open(ws.JournalPath())
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e workspace.Entry
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Outcome != workspace.Received {
				continue
			}
			key := e.From + " -> " + strings.Join(e.To, ",")
			if e.Note != "" {
				again++
			}
			if !seen[key+e.ID] {
				seen[key+e.ID] = true
				first[key] = append(first[key], e.ID)
			}
		}
		f.Close()
		for key, ids := range first {
			if !slices.IsSorted(ids) {
				t.Errorf("%s: %s arrived out of order", filepath.Base(ws.Root), key)
			}
		}
		t.Logf("%s: %d messages taken again after a fault (a no-op by id)", filepath.Base(ws.Root), again)
		if len(first) == 0 {
			t.Errorf("%s: the journal has no received lines", filepath.Base(ws.Root))
		}
	}
}

// hosts are the three network namespaces of threeHosts, and the parley
// under test.
type hosts struct {
	netns  *netns
	parley string
	hub    string
	a, b   string
	linkA  string // the hub's end of a's link: down, a is cut off
}

// netnsTests is held by a test that has made network namespaces, until
// they are removed.
var netnsTests sync.Mutex

// threeHosts makes three network namespaces for a test, named with prefix
// and the test process's id: a hub, and hosts a and b joined to it by veth
// pairs (see netns.host). The test is skipped, saying why, without root,
// without ip (iproute2), or where namespaces cannot be made; they are
// removed when the test ends.
func threeHosts(t *testing.T, prefix string) hosts {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making network namespaces needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("making network namespaces needs ip (iproute2)")
	}
	parley, err := exec.LookPath("parley")
	if err != nil {
		t.Fatal(err)
	}
	// One test at a time: the veth pairs are made in this host's
	// namespace, under names of the test process's id, before their ends
	// move into the test's namespaces.
	netnsTests.Lock()
	t.Cleanup(netnsTests.Unlock) // last: after the namespaces are removed
	suffix := fmt.Sprint(os.Getpid())
	h := hosts{parley: parley, hub: prefix + "hub-" + suffix, a: prefix + "a-" + suffix, b: prefix + "b-" + suffix}
	if out, err := exec.Command("ip", "netns", "add", h.hub).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here (%v: %s)", err, bytes.TrimSpace(out))
	}
	h.netns = &netns{t: t, names: []string{h.hub}}
	t.Cleanup(func() {
		for _, name := range h.netns.names {
			exec.Command("ip", "netns", "del", name).Run()
		}
	})
	h.netns.ip("-n", h.hub, "link", "set", "lo", "up")
	h.linkA = h.netns.host(h.hub, h.a, 1)
	h.netns.host(h.hub, h.b, 2)
	return h
}
