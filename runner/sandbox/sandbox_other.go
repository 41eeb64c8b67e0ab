//go:build !linux

package sandbox

// Available reports that no Landlock is offered here.
func Available() (version int, ok bool) { return 0, false }

// Restrict cannot confine a program here.
func Restrict(r Rules) error { return ErrUnavailable }
