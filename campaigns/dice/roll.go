package dice

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Result is one roll of an expression: every die, and the total.
type Result struct {
	// Expr is the expression as written, without spaces: "1d20+5".
	Expr string `json:"expression"`
	// Roll is the roll in the D&D protocol's notation: the expression,
	// then the expression with each dice term shown as its dice, then
	// the total: "1d20+5 = [8]+5 = 13". An expression without dice
	// leaves out the middle: "2+3 = 5".
	Roll string `json:"roll"`
	// Total is the value of the expression.
	Total int64 `json:"total"`
	// Terms are the dice terms, in the order they are written.
	Terms []Term `json:"terms"`
	// Natural is the face of the kept d20 when the first dice term is a
	// d20 check: one d20 kept, not exploding (d20, 1d20, 2d20kh1, 2d20kl1,
	// d20ro1). It is 0 for other expressions.
	Natural int `json:"natural,omitempty"`
	// Capped is true when a die stopped rerolling or exploding because it
	// reached MaxRerolls or MaxExplosions.
	Capped bool `json:"capped,omitempty"`
}

// Term is the roll of one dice term.
type Term struct {
	// Notation is the term as written: "4d6dl1".
	Notation string `json:"notation"`
	// Column is the term's 1-based column in the expression as given.
	Column int `json:"column"`
	// Sides is the number of sides of its dice: 100 for d%, 3 for dF.
	Sides int `json:"sides"`
	// Fudge is true for Fudge dice, whose faces are -1, 0 and +1.
	Fudge bool `json:"fudge,omitempty"`
	// Value is the sum of the kept dice.
	Value int64 `json:"value"`
	// Dice are the term's dice, in the order they were rolled. A die added
	// by an explosion (! or !p) follows the die that exploded.
	Dice []Die `json:"dice"`
}

// Die is one die of a term.
type Die struct {
	// Value is what the die counts for: its last face; for a compound die
	// (!!) the sum of its faces; for a die added by a penetrating
	// explosion (!p) its face less 1.
	Value int `json:"value"`
	// Kept is false for a die that keep or drop left out of the total.
	Kept bool `json:"kept"`
	// Extra is true for a die added by the explosion of the die before it.
	Extra bool `json:"extra,omitempty"`
	// Capped is true when the die stopped rerolling or exploding at a
	// limit rather than by chance.
	Capped bool `json:"capped,omitempty"`
	// Rolls are the faces the die showed, in order: faces that were
	// rerolled, then the face it kept; for a compound die, every face of
	// its chain.
	Rolls []Throw `json:"rolls"`
}

// Throw is one face a die showed.
type Throw struct {
	Face     int  `json:"face"`
	Rerolled bool `json:"rerolled,omitempty"` // the face was rerolled (r, ro)
	Exploded bool `json:"exploded,omitempty"` // the face set off another roll (!, !!, !p)
}

// String returns the roll in the D&D protocol's notation (Roll).
func (r *Result) String() string { return r.Roll }

// Outcome is how a roll went against a difficulty class. Its values are
// the words of the D&D protocol's DICE_RESULT `result` field.
type Outcome string

// Outcomes.
const (
	Success         Outcome = "success"
	Failure         Outcome = "failure"
	CriticalSuccess Outcome = "critical_success" // a natural 20 on a d20 check
	CriticalFailure Outcome = "critical_failure" // a natural 1 on a d20 check
)

// Against returns the outcome of the roll against the difficulty class
// dc: a natural 20 on a d20 check (see Natural) is a critical success and
// a natural 1 a critical failure, whatever the total; otherwise a total
// of at least dc succeeds.
func (r *Result) Against(dc int64) Outcome {
	switch {
	case r.Natural == 20:
		return CriticalSuccess
	case r.Natural == 1:
		return CriticalFailure
	case r.Total >= dc:
		return Success
	}
	return Failure
}

// Roll parses the expression s and rolls it with src.
func Roll(s string, src Source) (*Result, error) {
	e, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return e.Roll(src)
}

// Roll rolls the expression's dice with src, in the order they are
// written, and works out the total. Its errors are *Error values: a
// division by zero (ErrDivisionByZero), an overflow (ErrOverflow), or more
// than MaxRolls rolls (ErrLimit).
func (e *Expr) Roll(src Source) (*Result, error) {
	r := &Result{Expr: e.text, Terms: make([]Term, len(e.terms))}
	vals := make([]int64, len(e.terms))
	budget := MaxRolls
	for i, t := range e.terms {
		tr, err := t.roll(src, &budget)
		if err != nil {
			return nil, &Error{Expr: e.src, Col: t.col, Err: err}
		}
		for _, d := range tr.Dice {
			r.Capped = r.Capped || d.Capped
		}
		r.Terms[i], vals[i] = tr, tr.Value
	}
	total, err := e.root.eval(vals)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, &Error{Expr: e.src, Col: pe.pos + 1, Err: pe.err}
		}
		return nil, err
	}
	r.Total = total
	if e.check {
		for _, d := range r.Terms[0].Dice {
			if d.Kept {
				r.Natural = d.Value
			}
		}
	}
	r.Roll = e.format(r)
	return r, nil
}

// roll rolls one term, taking each roll from budget.
func (t *term) roll(src Source, budget *int) (Term, error) {
	out := Term{Notation: t.notation, Column: t.col, Sides: t.sides, Fudge: t.fudge}
	// throw rolls one face for d, rerolling it as the term says, and
	// returns the face kept.
	throw := func(d *Die) (int, error) {
		limit := MaxRerolls
		if t.once {
			limit = 1
		}
		for n := 0; ; n++ {
			if *budget == 0 {
				return 0, fmt.Errorf("the roll is %w: at most %d rolls, counting rerolls and explosions", ErrLimit, MaxRolls)
			}
			*budget--
			f := src.IntN(t.sides) + 1
			if t.fudge {
				f -= 2
			}
			if !t.rerolled(f) || n == limit {
				d.Capped = d.Capped || (n == limit && !t.once && t.rerolled(f))
				d.Rolls = append(d.Rolls, Throw{Face: f})
				return f, nil
			}
			d.Rolls = append(d.Rolls, Throw{Face: f, Rerolled: true})
		}
	}
	dice := make([]Die, 0, t.count)
	for range t.count {
		var d Die
		f, err := throw(&d)
		if err != nil {
			return out, err
		}
		d.Value = f
		if t.explode == explodeCompound {
			for n := 0; t.explodes(f); n++ {
				if n == MaxExplosions {
					d.Capped = true
					break
				}
				d.Rolls[len(d.Rolls)-1].Exploded = true
				if f, err = throw(&d); err != nil {
					return out, err
				}
				d.Value += f
			}
		}
		dice = append(dice, d)
		if t.explode != explodeAdd && t.explode != explodePenetrate {
			continue
		}
		for n := 0; t.explodes(f); n++ {
			last := &dice[len(dice)-1]
			if n == MaxExplosions {
				last.Capped = true
				break
			}
			last.Rolls[len(last.Rolls)-1].Exploded = true
			x := Die{Extra: true}
			if f, err = throw(&x); err != nil {
				return out, err
			}
			x.Value = f
			if t.explode == explodePenetrate {
				x.Value--
			}
			dice = append(dice, x)
		}
	}
	t.mark(dice)
	for _, d := range dice {
		if d.Kept {
			out.Value += int64(d.Value)
		}
	}
	out.Dice = dice
	return out, nil
}

// mark sets Kept on the dice the term keeps. Among equal dice, the ones
// rolled first are kept first and dropped first.
func (t *term) mark(dice []Die) {
	for i := range dice {
		dice[i].Kept = true
	}
	if t.keep == keepAll {
		return
	}
	order := make([]int, len(dice))
	for i := range order {
		order[i] = i
	}
	highFirst := t.keep == keepHigh || t.keep == dropHigh
	slices.SortStableFunc(order, func(a, b int) int {
		if highFirst {
			return cmp.Compare(dice[b].Value, dice[a].Value)
		}
		return cmp.Compare(dice[a].Value, dice[b].Value)
	})
	n := min(t.keepN, len(dice))
	out := order[:n] // the dice dropped
	if t.keep == keepHigh || t.keep == keepLow {
		out = order[n:] // all but the dice kept
	}
	for _, i := range out {
		dice[i].Kept = false
	}
}

// format writes the roll in the protocol's notation.
func (e *Expr) format(r *Result) string {
	var b strings.Builder
	b.WriteString(e.text)
	b.WriteString(" = ")
	if len(e.terms) > 0 {
		for _, p := range e.parts {
			if p.term < 0 {
				b.WriteString(p.text)
				continue
			}
			t := e.terms[p.term]
			b.WriteByte('[')
			for i, d := range r.Terms[p.term].Dice {
				if i > 0 {
					b.WriteString(", ")
				}
				writeDie(&b, d, t.fudge, t.explode == explodeCompound)
			}
			b.WriteByte(']')
		}
		b.WriteString(" = ")
	}
	b.WriteString(strconv.FormatInt(r.Total, 10))
	return b.String()
}

// writeDie writes one die: its faces, a "!" after each that exploded,
// struck through (~~3~~) when they do not count.
func writeDie(b *strings.Builder, d Die, fudge, compound bool) {
	face := func(f int) string {
		if fudge && f > 0 {
			return "+" + strconv.Itoa(f)
		}
		return strconv.Itoa(f)
	}
	if compound && !d.Kept {
		// One strike through the whole chain; rerolled faces are left out.
		b.WriteString("~~")
		first := true
		for _, th := range d.Rolls {
			if th.Rerolled {
				continue
			}
			if !first {
				b.WriteByte('+')
			}
			first = false
			b.WriteString(face(th.Face))
			if th.Exploded {
				b.WriteByte('!')
			}
		}
		b.WriteString("~~")
		return
	}
	sep := ", "
	if compound {
		sep = "+"
	}
	for i, th := range d.Rolls {
		if i > 0 {
			b.WriteString(sep)
		}
		s := face(th.Face)
		if i == len(d.Rolls)-1 && !compound {
			s = face(d.Value) // a penetrating extra die counts 1 less
		}
		if th.Exploded {
			s += "!"
		}
		if th.Rerolled || !d.Kept {
			s = "~~" + s + "~~"
		}
		b.WriteString(s)
	}
}

// node is a node of an expression's arithmetic.
type node interface {
	// eval returns the node's value, given the values of the dice terms.
	eval(vals []int64) (int64, error)
}

type number struct{ v int64 }

func (n *number) eval([]int64) (int64, error) { return n.v, nil }

// diceRef is the value of a dice term.
type diceRef struct{ i int }

func (d *diceRef) eval(vals []int64) (int64, error) { return vals[d.i], nil }

type negate struct {
	col int
	x   node
}

func (n *negate) eval(vals []int64) (int64, error) {
	x, err := n.x.eval(vals)
	if err != nil {
		return 0, err
	}
	if x == math.MinInt64 {
		return 0, &posError{pos: n.col - 1, err: ErrOverflow}
	}
	return -x, nil
}

type binop struct {
	op   rune
	col  int // the operator's column
	l, r node
}

func (n *binop) eval(vals []int64) (int64, error) {
	a, err := n.l.eval(vals)
	if err != nil {
		return 0, err
	}
	b, err := n.r.eval(vals)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) { return 0, &posError{pos: n.col - 1, err: err} }
	switch n.op {
	case '+':
		s := a + b
		if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
			return fail(ErrOverflow)
		}
		return s, nil
	case '-':
		s := a - b
		if (a >= 0 && b < 0 && s < 0) || (a < 0 && b > 0 && s >= 0) {
			return fail(ErrOverflow)
		}
		return s, nil
	case '*':
		if a == 0 || b == 0 {
			return 0, nil
		}
		p := a * b
		if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return fail(ErrOverflow)
		}
		return p, nil
	default: // '/'
		if b == 0 {
			return fail(ErrDivisionByZero)
		}
		if a == math.MinInt64 && b == -1 {
			return fail(ErrOverflow)
		}
		return a / b, nil // Go's division rounds toward zero
	}
}
