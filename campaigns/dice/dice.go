// Package dice owns dice notation: it parses expressions such as
// "1d20+5", "4d6dl1", "2d20kh1" or "(2d6!+3)*2", rolls them with a random
// source the caller passes in, and reports every die, the total and, for
// d20 checks, the outcome against a difficulty class.
//
// # Notation
//
//	NdS     N dice of S sides; N defaults to 1 (d20 = 1d20)
//	d%      a percentile die, d100
//	dF      a Fudge die: -1, 0 or +1 (4dF)
//	khN kN  keep the highest N dice (N defaults to 1: 2d20kh = 2d20kh1)
//	klN     keep the lowest N dice
//	dlN dN  drop the lowest N dice
//	dhN     drop the highest N dice
//	!       explode: a die showing its highest face adds another die
//	!>N     explode on a face above N (also !>=N, !<N, !<=N, and !N: on N)
//	!!      compound: the extra rolls add into the die that exploded
//	!p      penetrating: like !, but each extra die counts one less
//	rN      reroll a die showing N, again and again (also r<N, r>N, r<=N, r>=N)
//	roN     reroll once (ro1, ro<3)
//	+ - * / integer arithmetic (division rounds toward zero), parentheses
//
// Modifiers follow the die in any order; a die term takes at most one
// keep or drop and one explosion, and any number of rerolls of one kind
// (4d6r1r2). Rerolls apply to every roll, then explosions, then keep and
// drop. Letters may be upper or lower case. Spaces may separate numbers,
// dice and operators, but not the parts of one die term.
//
// # Results
//
// A [Result] prints in the D&D protocol's notation:
//
//	1d20+5 = [8]+5 = 13
//	4d6dl1 = [~~2~~, 5, 3, 6] = 14
//	1d6! = [6!, 4] = 10
//	1d6!! = [6!+4] = 10
//	2d6r1 = [~~1~~, 4, 5] = 9
//
// Struck faces (~~2~~) do not count: dropped dice, and faces that were
// rerolled. Every other number inside the brackets adds up to the term.
// A "!" marks a face that exploded. Fudge dice show as +1, 0 and -1.
//
// # Limits
//
// Expressions come from people and agents, so parsing and rolling are
// bounded: see [MaxLen], [MaxCount], [MaxSides], [MaxDice], [MaxRerolls],
// [MaxExplosions] and [MaxRolls]. A die term that could never stop ("1d1!",
// "1d6r<7") is refused when parsed. A chain of rerolls or explosions that
// reaches its limit stops there, and the die and the result say so
// (Capped).
package dice

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
)

// Limits on what an expression may ask for.
const (
	// MaxLen is the longest expression, in characters.
	MaxLen = 1000
	// MaxCount is the most dice one term may roll (1000d6).
	MaxCount = 1000
	// MaxSides is the most sides a die may have (d10000).
	MaxSides = 10000
	// MaxDice is the most dice all the terms of one expression may roll,
	// before rerolls and explosions.
	MaxDice = 10000
	// MaxRerolls is the most times one roll is rerolled by r; the die then
	// keeps its last face.
	MaxRerolls = 100
	// MaxExplosions is the most extra rolls one die's explosions add; the
	// chain then stops.
	MaxExplosions = 100
	// MaxRolls is the most rolls, counting rerolls and explosions, that
	// rolling one expression may make.
	MaxRolls = 100000
)

// Source is where dice get their faces. IntN returns a uniformly random
// number in [0, n). A *rand.Rand from math/rand/v2 is a Source; tests
// pass one that returns chosen faces.
type Source interface {
	IntN(n int) int
}

// Seeded returns a source that rolls the same dice for the same seed: a
// math/rand/v2 PCG generator seeded with (seed, seed).
func Seeded(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed))
}

// Random returns a PCG source seeded from crypto/rand, for rolls nobody
// can predict.
func Random() *rand.Rand {
	var b [16]byte
	crand.Read(b[:]) // never fails: crypto/rand crashes the program instead
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])))
}

// Errors callers may branch on with errors.Is. They come wrapped in an
// *Error that names the column.
var (
	// ErrDivisionByZero is the error for dividing by zero.
	ErrDivisionByZero = errors.New("division by zero")
	// ErrOverflow is the error for arithmetic beyond 64-bit integers.
	ErrOverflow = errors.New("arithmetic overflow")
	// ErrLimit is the error for an expression beyond one of the limits
	// (MaxLen, MaxCount, ...).
	ErrLimit = errors.New("over the limit")
	// ErrForever is the error for a die term that would never stop
	// rolling: every face explodes, or every face is rerolled.
	ErrForever = errors.New("would never stop rolling")
)

// Error is an error in an expression, found when parsing or rolling it.
// Its message names the column and shows the expression with a caret
// under that column:
//
//	column 6: expected a number, a die or "(" after "+"
//	  1d20+
//	       ^
type Error struct {
	Expr string // the expression as given
	Col  int    // 1-based column, in characters, in Expr
	Err  error
}

func (e *Error) Error() string {
	line, caret := snippet(e.Expr, e.Col)
	return "column " + strconv.Itoa(e.Col) + ": " + e.Err.Error() + "\n  " + line + "\n  " + caret
}

func (e *Error) Unwrap() error { return e.Err }

// snippetWidth is how much of a long expression an error shows around
// its column.
const snippetWidth = 60

// snippet returns the expression, or the part of it around col when it
// is long, with every character made printable in one cell, and a line
// with a caret under col.
func snippet(expr string, col int) (line, caret string) {
	rs := []rune(expr)
	if len(rs) > 4*MaxLen {
		rs = rs[:4*MaxLen]
	}
	for i, r := range rs {
		switch {
		case r == '\t':
			rs[i] = ' '
		case !unicode.IsGraphic(r) || r == unicode.ReplacementChar:
			rs[i] = '?'
		}
	}
	at := min(max(col-1, 0), len(rs)) // the caret's index in rs
	from, to := 0, len(rs)
	prefix, suffix := "", ""
	if len(rs) > snippetWidth {
		from = max(0, min(at-snippetWidth/2, len(rs)-snippetWidth))
		to = min(len(rs), from+snippetWidth)
		if from > 0 {
			prefix = "..."
		}
		if to < len(rs) {
			suffix = "..."
		}
	}
	line = prefix + string(rs[from:to]) + suffix
	caret = strings.Repeat(" ", len(prefix)+at-from) + "^"
	return line, caret
}
