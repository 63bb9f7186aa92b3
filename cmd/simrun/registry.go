package main

import (
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
)

// builtins is the registry of every built-in machine, stack, litmus
// adapter and workload: the one place simrun resolves names.
func builtins() *registry.Registry { return all.Default() }
