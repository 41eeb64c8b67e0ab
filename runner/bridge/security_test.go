package bridge

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestBridgeTLS: a tls:// URL connects with TLS, trusting the CA named by
// ca_file; a message goes across.
func TestBridgeTLS(t *testing.T) {
	dir := t.TempDir()
	caPEM, cert := selfSigned(t)
	ns := startServer(t, &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: filepath.Join(dir, "nats"),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, TLS: true,
	})
	url := strings.Replace(ns.ClientURL(), "nats://", "tls://", 1)
	mk := func(name, config string) *workspace.Workspace {
		root := filepath.Join(dir, name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "ca.pem"), caPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		ws, err := workspace.InitConfig(root, config)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	inn := mk("inn", fmt.Sprintf("bridge: {name: inn, url: %s, ca_file: ca.pem}\nagents:\n  - gm\n  - {name: aria, remote: home}\n  - {name: bram, remote: home}\n", url))
	home := mk("home", fmt.Sprintf("bridge: {name: home, url: %s, ca_file: ca.pem}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - bram\n", url))
	ids := deliver(t, inn, 3)
	for _, ws := range []*workspace.Workspace{inn, home} {
		if _, err := runBridge(t, context.Background(), ws, Options{UntilIdle: true}); err != nil {
			t.Fatalf("over TLS: %v", err)
		}
	}
	got, _ := home.Mailbox("aria").IDs(mailbox.Inbox)
	if len(got) != len(ids) {
		t.Errorf("over TLS, aria got %d of %d", len(got), len(ids))
	}
}

// TestBridgeToken: --serve with a token requires it; the bridge sends the
// one token_env names.
func TestBridgeToken(t *testing.T) {
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	ws, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s, token_env: PARLEY_TEST_TOKEN}\nagents: [gm]\n", ns.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "PARLEY_TEST_TOKEN" {
				return v
			}
			return ""
		}
	}
	if _, err := runBridge(t, context.Background(), ws, Options{UntilIdle: true, Getenv: env("s3cret")}); err != nil {
		t.Errorf("with the token: %v", err)
	}
	_, err = runBridge(t, context.Background(), ws, Options{UntilIdle: true, Getenv: env("")})
	if err == nil || !strings.Contains(err.Error(), "bridge.token_env: $PARLEY_TEST_TOKEN is not set") {
		t.Errorf("without the token: %v", err)
	}
	// A wrong token: the error that ends the run says the server refused
	// it (it said only that it could not connect within 10s).
	_, err = runBridge(t, context.Background(), ws, Options{UntilIdle: true, Getenv: env("wrong")})
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Errorf("with a wrong token: %v, want it to say the server refused it", err)
	}
}

// selfSigned makes a CA-signed certificate for 127.0.0.1: the CA's PEM
// and the server's certificate.
func selfSigned(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "parley test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, _ := x509.ParseCertificate(caDER)
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

// TestBridgePermissions: with the subject permissions of Permissions, a
// workspace's bridge works, and its user cannot publish as another
// workspace's agents.
func TestBridgePermissions(t *testing.T) {
	user := func(name string) *server.User {
		pub, sub := Permissions(workspace.DefaultStream, name)
		return &server.User{Username: name, Password: name + "-pw", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: pub}, Subscribe: &server.SubjectPermission{Allow: sub}}}
	}
	// earlier is a user given the permissions of an earlier parley, which
	// let it look at its own consumer only.
	earlier := func(name string) *server.User {
		u := user(name)
		u.Username, u.Password = "earlier-"+name, "earlier-pw"
		pub := slices.Clone(u.Permissions.Publish.Allow)
		for i, p := range pub {
			if strings.HasPrefix(p, "$JS.API.CONSUMER.INFO.") {
				pub[i] = "$JS.API.CONSUMER.INFO." + workspace.DefaultStream + "." + ConsumerName(name)
			}
		}
		u.Permissions = &server.Permissions{Publish: &server.SubjectPermission{Allow: pub}, Subscribe: u.Permissions.Subscribe}
		return u
	}
	ns := startServer(t, &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(),
		Users: []*server.User{{Username: "admin", Password: "admin-pw"}, user("inn"), user("home"), earlier("inn")},
	})
	// The operator makes the stream.
	admin, err := nats.Connect(ns.ClientURL(), nats.UserInfo("admin", "admin-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: workspace.DefaultStream, Subjects: []string{"parley.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	url := ns.ClientURL()
	inn, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s, user_env: U, password_env: P}\nagents:\n  - gm\n  - {name: aria, remote: home}\n  - {name: bram, remote: home}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	home, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s, user_env: U, password_env: P}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - bram\n", url))
	if err != nil {
		t.Fatal(err)
	}
	as := func(name string) func(string) string {
		return func(k string) string {
			switch k {
			case "U":
				return name
			case "P":
				return name + "-pw"
			}
			return ""
		}
	}
	ids := deliver(t, inn, 2)
	if _, err := runBridge(t, context.Background(), inn, Options{UntilIdle: true, Getenv: as("inn")}); err != nil {
		t.Fatalf("inn's bridge with its permissions: %v", err)
	}
	// inn's user tries to publish as home's aria, and as a workspace
	// that is not it: the server refuses both.
	rogue, err := nats.Connect(url, nats.UserInfo("inn", "inn-pw"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()
	forged := "---\nid: " + mailbox.IDAt("aria", time.Now()) + "\nfrom: aria\nto: bram\n---\nforged\n"
	rogue.Publish(Subject("home", "bram", "home", "aria"), []byte(forged))
	rogue.Publish(Subject("home", "bram", "evil", "gm"), []byte(forged))
	rogue.Flush()
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true, Getenv: as("home")}); err != nil {
		t.Fatalf("home's bridge with its permissions: %v", err)
	}
	// Their permissions let them ask whether the other workspace reads
	// the stream (see Readers), with no error: inn ran before home had
	// ever connected, home after inn.
	for ws, unread := range map[*workspace.Workspace]string{inn: "home", home: ""} {
		st, _, err := ws.ReadBridgeState()
		if err != nil || st.LastError != "" || strings.Join(st.Unread, ",") != unread {
			t.Errorf("%s's bridge state: last error %q, unread remotes %q, %v; want no error, unread %q", st.Name, st.LastError, st.Unread, err, unread)
		}
	}
	// With an earlier parley's permissions the look is refused: the
	// bridge works all the same, and the refusal is no error of its.
	earlierEnv := func(k string) string {
		return map[string]string{"U": "earlier-inn", "P": "earlier-pw"}[k]
	}
	deliver(t, inn, 1)
	if _, err := runBridge(t, context.Background(), inn, Options{UntilIdle: true, Getenv: earlierEnv}); err != nil {
		t.Fatalf("inn's bridge with an earlier parley's permissions: %v", err)
	}
	if st, _, _ := inn.ReadBridgeState(); st.LastError != "" || len(st.Unread) != 0 || st.Forwarded != 2 {
		t.Errorf("inn's bridge with an earlier parley's permissions: last error %q, unread %q, forwarded %d; want none, none, 2 (one message to aria and bram)", st.LastError, st.Unread, st.Forwarded)
	}
	for _, agent := range []string{"aria", "bram"} {
		got, _ := home.Mailbox(agent).IDs(mailbox.Inbox)
		if strings.Join(got, " ") != strings.Join(ids, " ") {
			t.Errorf("%s's inbox = %v, want %v (and nothing forged)", agent, got, ids)
		}
		if n, _ := home.Mailbox(agent).Count(mailbox.Dead); n != 0 {
			t.Errorf("%s holds %d in dead/: a forged message reached the stream", agent, n)
		}
	}
}
