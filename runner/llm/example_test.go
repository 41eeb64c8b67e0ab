package llm_test

import (
	"fmt"

	"github.com/parley-dev/parley/runner/llm"
)

// A conversation kept within a budget of tokens: the oldest turns go,
// and the file says so.
func ExampleConversation_Trim() {
	c := &llm.Conversation{Agent: "gm", Turns: []llm.Turn{
		{Role: llm.RoleUser, Text: "I search the room for traps, slowly, every corner.\n"},
		{Role: llm.RoleAssistant, Text: "You find a pressure plate.\n"},
		{Role: llm.RoleUser, Text: "I step around it.\n"},
	}}
	c.Trim(6)
	fmt.Print(string(c.Bytes()))
	// Output:
	// # conversation: gm
	//
	// dropped: 2 turns, about 20 tokens (kept within memory_tokens)
	//
	// ## user
	//
	// ```
	// I step around it.
	// ```
}
