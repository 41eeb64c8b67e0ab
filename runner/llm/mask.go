package llm

import (
	"errors"
	"strings"
)

// minMaskedKey is the length under which a key is not masked: a
// placeholder a local server takes ("none", "ollama") guards nothing, and
// masking it would garble every word that holds it.
const minMaskedKey = 8

// maskKey returns text with every copy of key in it masked: "sk-…2345",
// the key's prefix up to its first dash (when it has a short one, as
// "sk-" or "sk-proj-" do) and its last four characters. Some endpoints
// and gateways repeat the key they were sent in their answers ("Incorrect
// API key provided: Bearer sk-..."), and what parley keeps of what an
// endpoint said goes everywhere: the journal, notices in the people's
// inboxes, .parley/agents.json, parley status and log, the run's log.
// parley holds the key; it is never to be written down.
func maskKey(text, key string) string {
	if len(key) < minMaskedKey || !strings.Contains(text, key) {
		return text
	}
	return strings.ReplaceAll(text, key, maskedKey(key))
}

// maskedKey is a key as parley shows it: "sk-…2345".
func maskedKey(key string) string {
	prefix := ""
	if i := strings.LastIndex(key[:min(len(key), 9)], "-"); i > 0 && len(key)-(i+1) >= minMaskedKey {
		prefix = key[:i+1] // sk-, sk-proj-
	}
	return prefix + "…" + key[len(key)-4:]
}

// masked is maskKey with the agent's key: every text that comes from
// the endpoint goes through it before parley keeps or shows it.
func (a *Agent) masked(text string) string { return maskKey(text, a.key) }

// maskedErr is err with the agent's key masked in its text; err itself
// (and what it wraps, for errors.Is) when the text does not hold it.
func (a *Agent) maskedErr(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	if m := a.masked(s); m != s {
		return errors.New(m)
	}
	return err
}
