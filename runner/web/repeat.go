package web

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"sync"
)

// keptAnswers is how many answers to keyed posts a server keeps: a
// repeat comes within seconds (the browser sending a post again whose
// answer the connection dropped, the person tapping again after "not
// sent"), and each action of a session has a key of its own.
const keptAnswers = 1024

// keyPattern is what a post's key may be: the page makes 32 hex digits.
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// errKey is the answer to a post whose key the page did not make.
var errKey = errors.New("a form whose key is not one the page makes (8 to 64 letters, digits, - or _): nothing was sent (reload the page and do it again)")

// errKeyReused is the answer to a post whose key came with another
// action before.
var errKeyReused = errors.New("not sent: this key came with another action before (reload the page and do it again)")

// answer is what /act answered to a post: its status and text.
type answer struct {
	code int
	text string
}

// answered keeps what /act answered to the last keptAnswers keyed posts,
// by key, with the form each came with: a post that comes again with the
// same key is answered as it was the first time, and nothing is done
// again. It is kept while the server runs: a page opened before a start
// of parley serve has another start's CSRF token, and its posts are
// refused before their key is looked up. Its user serialises find and
// keep (Server.writing), so that a repeat that comes while the first is
// carried out waits for it, then finds its answer.
type answered struct {
	mu    sync.Mutex
	byKey map[string]keptAnswer
	order []string // keys, oldest first
}

type keptAnswer struct {
	form string // the form, without its CSRF token and key
	answer
}

// formOf is what a post asks, without its CSRF token and its key: the
// same action sent again says the same.
func formOf(f url.Values) string {
	c := url.Values{}
	for k, v := range f {
		if k != "csrf" && k != "key" {
			c[k] = v
		}
	}
	return c.Encode()
}

// find returns the answer kept for key, and whether there is one; a key
// that came with another form is answered with errKeyReused (422).
func (a *answered) find(key, form string) (answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, ok := a.byKey[key]
	if !ok {
		return answer{}, false
	}
	if k.form != form {
		return answer{code: http.StatusUnprocessableEntity, text: errKeyReused.Error() + "\n"}, true
	}
	return k.answer, true
}

// keep keeps the answer to the post of key, forgetting the oldest kept
// past keptAnswers.
func (a *answered) keep(key, form string, ans answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byKey == nil {
		a.byKey = map[string]keptAnswer{}
	}
	if _, ok := a.byKey[key]; !ok {
		a.order = append(a.order, key)
	}
	a.byKey[key] = keptAnswer{form: form, answer: ans}
	for len(a.order) > keptAnswers {
		delete(a.byKey, a.order[0])
		a.order = a.order[1:]
	}
}
