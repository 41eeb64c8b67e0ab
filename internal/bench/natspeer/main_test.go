package main

import (
	"context"
	"testing"
)

// TestMeasure runs the peer on a few messages: both phases publish
// everything and are acknowledged.
func TestMeasure(t *testing.T) {
	r, err := measure(context.Background(), t.TempDir(), 50)
	if err != nil {
		t.Fatal(err)
	}
	if r.OneAtATime <= 0 || r.InFlight <= 0 {
		t.Errorf("measure = %+v, want two rates above 0", r)
	}
}
