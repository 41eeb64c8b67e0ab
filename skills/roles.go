package skills

import (
	"regexp"
	"strings"
)

var (
	parenthetical = regexp.MustCompile(`\([^)]*\)`)
	roleSplit     = regexp.MustCompile(`\s*(?:,|/|\bor\b|\band\b)\s*`)
	andOnly       = regexp.MustCompile(`\band\b`)
	orWord        = regexp.MustCompile(`\bor\b|/`)
	singleRole    = regexp.MustCompile(`\b(?:a|an|one|any|some|specific)\b`)
	phaseRe       = regexp.MustCompile(`(?i)^\s*(?:phase\s*)?(\d+)\s*(\+|only)?`)
)

// roleWords maps the ways protocols name roles to parley's role names.
var roleWords = map[string]string{
	"gm": "gm", "game master": "gm", "dm": "gm",
	"team lead": "team-lead", "team-lead": "team-lead", "lead": "team-lead", "team leader": "team-lead",
	"narrator":         "narrator",
	"player":           "player",
	"player teammate":  "player",
	"players":          "player",
	"player teammates": "player",
	"ai player":        "player",
	"human":            "human", "human's player teammate": "human", "human's player": "human",
	"human player": "human", "human seat": "human",
	"teammate": "any", "teammates": "any", "any": "any", "agent": "any", "agents": "any",
	"team": "team", "anyone": "any", "everyone": "*",
}

// parseRoles reads roles as a protocol writes them ("GM or any player
// teammate", "worker, debugger, documenter", "All (broadcast)") into
// parley's role names. A broadcast gives "*". all reports that the message
// goes to every agent of the roles (a broadcast, or a plural such as
// "player teammates").
func parseRoles(text string) (roles []string, all bool) {
	s := strings.TrimSpace(strings.ToLower(stripTicks(text)))
	if strings.Contains(s, "broadcast") || s == "*" || s == "all" {
		return []string{"*"}, true
	}
	s = strings.TrimSpace(parenthetical.ReplaceAllString(s, ""))
	if rest, ok := cutAny(s, "all of the ", "each of the ", "every one of the ", "all the ", "both ", "all ", "every ", "each "); ok {
		all = true
		s = rest
		if r, ok := roleWords[strings.TrimSpace(s)]; ok && (r == "any" || r == "agent" || r == "team") {
			return []string{"*"}, true
		}
	}
	s, _ = cutAny(s, "either ")
	if andOnly.MatchString(s) && !orWord.MatchString(s) && !singleRole.MatchString(s) {
		// "the editor and the translator": both, not either. ("a
		// player and the narrator" names one player: which, to: says.)
		all = true
	}
	for _, part := range roleSplit.Split(s, -1) {
		part = strings.Trim(strings.TrimSpace(part), ".")
		for _, prefix := range []string{"either ", "a ", "an ", "the ", "specific ", "another ", "any ", "each ", "every ", "one "} {
			if strings.HasPrefix(part, prefix) && part != "any" {
				part = strings.TrimSpace(strings.TrimPrefix(part, prefix))
			}
		}
		// A clause rather than a role ("included in [X] for tasks"):
		// skipped.
		if part == "" || strings.ContainsAny(part, "[]`") || len(strings.Fields(part)) > 4 {
			continue
		}
		if strings.HasSuffix(part, "s") && !strings.HasSuffix(part, "'s") && part != "agents" {
			if _, ok := roleWords[part]; ok || strings.HasSuffix(part, "teammates") || strings.HasSuffix(part, "players") {
				all = true
			}
		}
		role, ok := roleWords[part]
		if !ok {
			if all {
				part = singular(part)
			}
			role = strings.Join(strings.Fields(part), "-")
		}
		if !contains(roles, role) {
			roles = append(roles, role)
		}
	}
	return roles, all
}

// parseTransport reads a transport: "broadcast", or a direct message (any
// other wording); "direct only" or "never broadcast" marks a type that may
// not be broadcast.
func parseTransport(text string, noBroadcastBefore bool) (transport string, noBroadcast bool) {
	s := strings.ToLower(text)
	if noBroadcastRe.MatchString(s) {
		return "direct", true
	}
	if strings.Contains(s, "broadcast") {
		return "broadcast", noBroadcastBefore
	}
	return "direct", noBroadcastBefore
}

var noBroadcastRe = noBroadcast

// parsePhase reads "1+", "**1 only**", "Phase 2+" or "1+ (all phases)".
func parsePhase(text string) string {
	m := phaseRe.FindStringSubmatch(stripTicks(strings.ReplaceAll(text, "*", "")))
	if m == nil {
		return ""
	}
	switch strings.ToLower(m[2]) {
	case "+":
		return m[1] + "+"
	case "only":
		return m[1] + " only"
	}
	return m[1] + " only"
}

// cutAny removes the first of prefixes s starts with.
func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return s, false
}

// singular makes the last word of a plural role singular: "drivers" is
// driver, "secretaries" secretary.
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "ss"):
		return s
	case strings.HasSuffix(s, "s"):
		return strings.TrimSuffix(s, "s")
	}
	return s
}
