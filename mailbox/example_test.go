package mailbox_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parley-dev/parley/mailbox"
)

func ExampleParse() {
	m, err := mailbox.Parse([]byte("[NARRATIVE]\nscene: 5\n\nThe door creaks open.\n"))
	if err != nil {
		log.Fatal(err)
	}
	typ, _ := m.Header().Get("type")
	scene, _ := m.Payload().Get("scene")
	fmt.Println("tag:", m.Tag)
	fmt.Println("type:", typ)
	fmt.Println("scene:", scene)
	fmt.Printf("body: %q\n", m.Body)
	m.Set("from", "gm")
	fmt.Print(string(m.Bytes()))
	// Output:
	// tag: NARRATIVE
	// type: NARRATIVE
	// scene: 5
	// body: "The door creaks open.\n"
	// ---
	// from: gm
	// type: NARRATIVE
	// ---
	// [NARRATIVE]
	// scene: 5
	//
	// The door creaks open.
}

func ExampleDir_Deliver() {
	root, err := os.MkdirTemp("", "parley-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	bob := mailbox.Dir(filepath.Join(root, "mailboxes", "bob"))
	if err := bob.Init(); err != nil {
		log.Fatal(err)
	}
	s, err := mailbox.NewSyncer(root)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	const id = "20261121-101500.123456Z-alice-3fa9c2"
	msg := []byte("---\nid: " + id + "\nfrom: alice\nto: bob\n---\nHello, Bob.\n")
	for range 2 {
		delivered, err := bob.Deliver(id, msg, s)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("delivered:", delivered)
	}
	// The batch is durable once Sync returns.
	if err := s.Sync(); err != nil {
		log.Fatal(err)
	}
	inbox, err := bob.List(mailbox.Inbox)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range inbox {
		fmt.Println(e.Name)
	}
	// Output:
	// delivered: true
	// delivered: false
	// 20261121-101500.123456Z-alice-3fa9c2.md
}

func ExampleReply() {
	ask, err := mailbox.Parse([]byte("---\nid: 20261121-101500.000001Z-alice-3fa9c2\nfrom: alice\nto: bob\n---\nReady?\n"))
	if err != nil {
		log.Fatal(err)
	}
	answer := mailbox.Reply(ask, []byte("Ready.\n"))
	answer.Set("from", "bob")
	fmt.Print(string(answer.Bytes()))
	// Output:
	// ---
	// from: bob
	// to: alice
	// thread: 20261121-101500.000001Z-alice-3fa9c2
	// reply_to: 20261121-101500.000001Z-alice-3fa9c2
	// ---
	// Ready.
}

func ExampleSplitFrontmatter() {
	data := []byte("---\r\nname: dice\r\n---\r\n# Dice\r\n")
	fm, err := mailbox.SplitFrontmatter(data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("header: %q, bytes %d to %d\n", fm.Header, fm.HeaderStart, fm.HeaderEnd)
	fmt.Printf("body: %q, from byte %d, line %d\n", fm.Body, fm.BodyStart, fm.BodyLine)
	_, err = mailbox.SplitFrontmatter([]byte("---\nname: dice\n# Dice\n"))
	fmt.Println(errors.Is(err, mailbox.ErrUnclosedFrontmatter))
	// Output:
	// header: "name: dice\r\n", bytes 5 to 17
	// body: "# Dice\r\n", from byte 22, line 4
	// true
}
