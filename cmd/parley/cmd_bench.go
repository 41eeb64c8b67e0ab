package main

import "github.com/urfave/cli/v2"

func benchCommand(e *env) *cli.Command {
	return &cli.Command{Name: "bench", Usage: "measure routing speed", Action: func(c *cli.Context) error { return nil }}
}
