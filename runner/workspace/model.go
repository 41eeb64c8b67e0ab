package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/spell"
)

// DriverOpenAI is the driver of an agent that is a model behind an
// OpenAI-compatible chat-completions endpoint (see Model).
const DriverOpenAI = "openai"

// Defaults of an openai agent's endpoint section.
const (
	DefaultModelTimeout  = 60 * time.Second
	DefaultMaxRetries    = 2
	DefaultMaxRepairs    = 2
	DefaultMaxToolRounds = 8
	DefaultMemoryTokens  = 8000
	DefaultOutageLimit   = time.Hour
)

// Model is the openai: section of an agent with driver: openai: which
// endpoint it calls and how. Its keys:
//
//	openai:
//	  base_url: http://localhost:8080/v1 # the endpoint (default: OpenAI's)
//	  model: llama3.1                    # required
//	  key_env: OPENAI_API_KEY            # the environment variable holding the key
//	  temperature: 0.7                   # left out: the endpoint's default
//	  max_tokens: 1024                   # the longest answer; left out: the endpoint's
//	  timeout: 60s                       # one request (each retry gets as long)
//	  max_retries: 2                     # a 429, a 5xx, a timeout or no connection, tried again
//	  outage_limit: 1h                   # an endpoint down or rate-limiting is waited for this long; 0: not at all
//	  max_repairs: 2                     # a refused answer, sent back to be repaired
//	  max_tool_rounds: 8                 # rounds of tool calls for one message
//	  memory_tokens: 8000                # the conversation kept, in tokens (about 4 characters each)
//	  prompt: prompts/gm.md              # the role's prompt, relative to the workspace
type Model struct {
	BaseURL string
	Model   string
	// KeyEnv names the environment variable that holds the key; the key
	// itself is never in parley.yaml. Empty: no key is sent (a local
	// server).
	KeyEnv      string
	Temperature *float64
	MaxTokens   int64
	Timeout     time.Duration
	MaxRetries  int
	// OutageLimit is how long an endpoint that cannot be used (no
	// connection, 429, 502, 503, 504) is waited for, its agent's
	// messages held, before they fail as any other error; 0 holds none.
	OutageLimit   time.Duration
	MaxRepairs    int
	MaxToolRounds int
	MemoryTokens  int
	Prompt        string
	Line          int    // line of the section in parley.yaml
	Key           string // the section's key in parley.yaml: agents[0].openai
	KeyEnvLine    int    // line of key_env:, for Problem's errors
	PromptLine    int    // line of prompt:, for Problem's errors
}

// Problem returns why the model cannot be called as its section says,
// for what lies outside parley.yaml: the prompt file missing, unreadable
// or a directory (prompt: is relative to root), or the variable key_env
// names not set (getenv). It is a *ConfigError naming the line and the
// key, or nil. parley run refuses to start with it, and parley status
// says so (the runner's DriverProblem): every message would fail alike.
func (m *Model) Problem(root string, getenv func(string) string) error {
	bad := func(line int, key, format string, args ...any) error {
		return &ConfigError{Path: ConfigFile, Line: line, Key: m.Key + "." + key, Err: fmt.Errorf(format, args...)}
	}
	if m.Prompt != "" {
		path := m.Prompt
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		info, err := os.Stat(path)
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return bad(m.PromptLine, "prompt", "%s: no such file (the role's prompt, relative to the workspace)", m.Prompt)
		case errors.As(err, &pe):
			return bad(m.PromptLine, "prompt", "%s: %v", m.Prompt, pe.Err)
		case err != nil:
			return bad(m.PromptLine, "prompt", "%v", err)
		case info.IsDir():
			return bad(m.PromptLine, "prompt", "%s: a directory, not a file (the role's prompt, relative to the workspace)", m.Prompt)
		}
		f, err := os.Open(path)
		if err != nil {
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return bad(m.PromptLine, "prompt", "%s: %v", m.Prompt, err)
		}
		f.Close()
	}
	if m.KeyEnv != "" && getenv(m.KeyEnv) == "" {
		return bad(m.KeyEnvLine, "key_env", "the environment variable %s holds no key (set it where parley runs, or leave key_env out for an endpoint that takes no key)", m.KeyEnv)
	}
	return nil
}

// Budget caps what models may use: tokens (in and out together) and cost
// (from the price table). Zero is no cap.
type Budget struct {
	Tokens int64
	Cost   float64
}

// Limited reports whether the budget caps anything.
func (b Budget) Limited() bool { return b.Tokens > 0 || b.Cost > 0 }

// Price is what a model costs, per million tokens in and out, in whatever
// currency the price table is written in.
type Price struct {
	Input  float64
	Output float64
}

// Cost returns what tokens in and out cost at this price.
func (p Price) Cost(in, out int64) float64 {
	return (float64(in)*p.Input + float64(out)*p.Output) / 1e6
}

// parseModel reads an agent's openai: section.
func parseModel(v *yaml.Node, key string, bad badFunc) (*Model, error) {
	m := &Model{Timeout: DefaultModelTimeout, MaxRetries: DefaultMaxRetries, OutageLimit: DefaultOutageLimit, MaxRepairs: DefaultMaxRepairs,
		MaxToolRounds: DefaultMaxToolRounds, MemoryTokens: DefaultMemoryTokens, Line: v.Line, Key: key}
	err := eachKey(v, key, bad, map[string]func(*yaml.Node) error{
		"base_url": func(v *yaml.Node) error {
			if err := scalar(v, key+".base_url", &m.BaseURL, bad); err != nil {
				return err
			}
			if why := checkBaseURL(m.BaseURL); why != "" {
				return bad(v, key+".base_url", "%s", why)
			}
			return nil
		},
		"model": func(v *yaml.Node) error { return scalar(v, key+".model", &m.Model, bad) },
		"key_env": func(v *yaml.Node) error {
			m.KeyEnvLine = v.Line
			if err := scalar(v, key+".key_env", &m.KeyEnv, bad); err != nil {
				return err
			}
			if !envName(m.KeyEnv) {
				return bad(v, key+".key_env", "%q is not the name of an environment variable (like OPENAI_API_KEY): the key itself never goes in %s", m.KeyEnv, ConfigFile)
			}
			return nil
		},
		"temperature": func(v *yaml.Node) error {
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil || v.Kind != yaml.ScalarNode || f < 0 || f > 2 {
				return bad(v, key+".temperature", "%q is not a temperature (0 to 2)", v.Value)
			}
			m.Temperature = &f
			return nil
		},
		"max_tokens": func(v *yaml.Node) error {
			var n int
			if err := count(v, key+".max_tokens", &n, bad); err != nil {
				return err
			}
			m.MaxTokens = int64(n)
			return nil
		},
		"timeout": func(v *yaml.Node) error {
			if err := duration(v, key+".timeout", &m.Timeout, bad); err != nil {
				return err
			}
			if m.Timeout == 0 {
				return bad(v, key+".timeout", "must be more than 0")
			}
			return nil
		},
		"max_retries":   func(v *yaml.Node) error { return count(v, key+".max_retries", &m.MaxRetries, bad) },
		"outage_limit":  func(v *yaml.Node) error { return duration(v, key+".outage_limit", &m.OutageLimit, bad) },
		"max_repairs":   func(v *yaml.Node) error { return count(v, key+".max_repairs", &m.MaxRepairs, bad) },
		"memory_tokens": func(v *yaml.Node) error { return count(v, key+".memory_tokens", &m.MemoryTokens, bad) },
		"max_tool_rounds": func(v *yaml.Node) error {
			if err := count(v, key+".max_tool_rounds", &m.MaxToolRounds, bad); err != nil {
				return err
			}
			if m.MaxToolRounds < 1 {
				return bad(v, key+".max_tool_rounds", "must be 1 or more")
			}
			return nil
		},
		"prompt": func(v *yaml.Node) error {
			m.PromptLine = v.Line
			return scalar(v, key+".prompt", &m.Prompt, bad)
		},
	})
	if err != nil {
		return nil, err
	}
	if m.Model == "" {
		return nil, bad(v, key+".model", "%w: name the model the endpoint serves (model: llama3.1)", ErrMissing)
	}
	return m, nil
}

// checkBaseURL says what is wrong with an endpoint's URL: one the HTTP
// client cannot call (no http or https scheme, no host), or one with a
// user and password in it. It returns "" for a good one.
func checkBaseURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not an http:// or https:// URL (like http://localhost:11434/v1)", s)
	}
	if u.User != nil {
		return fmt.Sprintf("%q: inline credentials are refused: %s is committed to git; name the environment variable that holds the key (key_env: OPENAI_API_KEY)", u.Redacted(), ConfigFile)
	}
	return ""
}

// envName reports whether s can be the name of an environment variable.
func envName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// parseBudget reads a budget: section: tokens and cost, and the line of
// cost: into costLine.
func parseBudget(v *yaml.Node, key string, dst *Budget, costLine *int, bad badFunc) error {
	return eachKey(v, key, bad, map[string]func(*yaml.Node) error{
		"tokens": func(v *yaml.Node) error {
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil || v.Kind != yaml.ScalarNode || n < 0 {
				return bad(v, key+".tokens", "%q is not a number of tokens", v.Value)
			}
			dst.Tokens = n
			return nil
		},
		"cost": func(v *yaml.Node) error {
			*costLine = v.Line
			return money(v, key+".cost", &dst.Cost, bad)
		},
	})
}

// parsePrices reads the prices: table: for each model, input: and output:
// per million tokens.
func parsePrices(v *yaml.Node, bad badFunc) (map[string]Price, error) {
	if v.Kind != yaml.MappingNode {
		return nil, bad(v, "prices", "expected each model with its input: and output: price per million tokens")
	}
	out := map[string]Price{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, pv := v.Content[i], v.Content[i+1]
		if twice, err := given(v, i, "prices", bad); twice {
			if err != nil {
				return nil, err
			}
			continue
		}
		key := "prices." + k.Value
		var p Price
		err := eachKey(pv, key, bad, map[string]func(*yaml.Node) error{
			"input":  func(v *yaml.Node) error { return money(v, key+".input", &p.Input, bad) },
			"output": func(v *yaml.Node) error { return money(v, key+".output", &p.Output, bad) },
		})
		if err != nil {
			return nil, err
		}
		out[k.Value] = p
	}
	return out, nil
}

func money(v *yaml.Node, key string, dst *float64, bad badFunc) error {
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil || v.Kind != yaml.ScalarNode || f < 0 {
		return bad(v, key, "%q is not an amount (like 2.50)", v.Value)
	}
	*dst = f
	return nil
}

// checkModel checks an agent's openai: section against its driver.
func checkModel(a *Agent, key string, item *yaml.Node, bad badFunc) error {
	switch {
	case a.Driver == DriverOpenAI && a.Model == nil:
		return bad(item, key+".openai", "%w: an openai agent needs its endpoint (openai: {base_url: ..., model: ...})", ErrMissing)
	case a.Driver != DriverOpenAI && a.Model != nil:
		return bad(item, key+".openai", "only an openai agent has an endpoint (driver: openai)")
	case a.Driver != DriverOpenAI && a.Budget.Limited():
		return bad(item, key+".budget", "only an openai agent has a budget (driver: openai)")
	}
	return nil
}

// PriceOf returns the price of a model in the price table: the model's
// own, else that of the longest name in the table the model's name
// extends with a version (a date, a snapshot number, "latest"): gpt-4o
// prices gpt-4o-2024-08-06 and gpt-4o-latest, claude-3-5-sonnet prices
// claude-3-5-sonnet-20241022; but not gpt-4o-mini, another model. A
// model is priced by the name parley.yaml gives it (openai.model), the
// name the journal's model lines keep, whatever name the endpoint
// answers with.
func (c *Config) PriceOf(model string) (Price, bool) {
	return priceOf(c.Prices, model)
}

func priceOf(prices map[string]Price, model string) (Price, bool) {
	if p, ok := prices[model]; ok {
		return p, true
	}
	best := ""
	for name := range prices {
		if rest, ok := strings.CutPrefix(model, name); ok && name != "" && len(name) > len(best) && version(rest) {
			best = name
		}
	}
	if best == "" {
		return Price{}, false
	}
	return prices[best], true
}

// version reports whether s, what follows a priced name in a model's
// name, names a version of that model: "-2024-08-06", "-0613",
// "-20241022", "@20241022", "-latest".
func version(s string) bool {
	if len(s) < 2 || (s[0] != '-' && s[0] != '@') {
		return false
	}
	s = s[1:]
	if s == "latest" {
		return true
	}
	if s[0] < '0' || s[0] > '9' {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// checkPrices refuses a cost budget that would count nothing: an openai
// agent's, or the session's, when an openai agent it applies to calls a
// model the prices: table does not price (PriceOf). Each of that
// agent's calls would cost 0, and the budget would never stop it
// (tryout: a typo in prices: ran unbounded, usage showing a cost of 0).
func checkPrices(cfg *Config, path string) error {
	for _, a := range cfg.Agents {
		if a.Driver != DriverOpenAI || a.Model == nil {
			continue
		}
		if _, ok := cfg.PriceOf(a.Model.Model); ok {
			continue
		}
		var line int
		var key, whose string
		switch {
		case a.Budget.Cost > 0:
			line, key, whose = a.CostLine, a.Key+".budget.cost", "its"
		case cfg.Budget.Cost > 0:
			line, key, whose = cfg.CostLine, "budget.cost", "the session's"
		default:
			continue
		}
		return &ConfigError{Path: path, Line: line, Key: key, Err: fmt.Errorf("%w: %s calls %s, which prices: does not list (%s): its calls would count 0 against %s cost budget, which would never stop it; price %s in prices: (%s: {input: ..., output: ...}, per million tokens), or give the budget in tokens",
			ErrUnpriced, a.Name, a.Model.Model, cfg.pricesListed(a.Model.Model), whose, a.Model.Model, a.Model.Model)}
	}
	return nil
}

// ErrUnpriced is a cost budget that applies to a model the prices:
// table does not price.
var ErrUnpriced = errors.New("no price for the model")

// pricesListed says what prices: lists, for a model it does not: the
// models it prices, and the one the model's name is most likely a
// misspelling of.
func (c *Config) pricesListed(model string) string {
	if len(c.Prices) == 0 {
		if c.PricesLine > 0 {
			return "it lists none"
		}
		return ConfigFile + " has no prices:"
	}
	names := slices.Sorted(maps.Keys(c.Prices))
	s := fmt.Sprintf("line %d lists %s", c.PricesLine, strings.Join(names, ", "))
	if near := nearestModel(model, names); near != "" {
		s += "; did you mean " + near + "?"
	}
	return s
}

// nearestModel returns the names of names model is most likely meant
// to be, "a or b": those fewest letters away, a few at most; else the
// only one that holds the model's name (gpt-m1 for m1); "" when none is.
func nearestModel(model string, names []string) string {
	lower := strings.ToLower(model)
	var near []string
	best := max(2, len(model)/4) + 1
	for _, n := range names {
		switch d := spell.Distance(lower, strings.ToLower(n)); {
		case d < best:
			near, best = []string{n}, d
		case d == best:
			near = append(near, n)
		}
	}
	if len(near) > 0 {
		return strings.Join(near, " or ")
	}
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), lower) {
			near = append(near, n)
		}
	}
	if len(near) == 1 {
		return near[0]
	}
	return ""
}
