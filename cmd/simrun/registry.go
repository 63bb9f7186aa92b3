package main

import (
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
)

// builtins returns the registry of every built-in machine, stack, litmus
// adapter and workload: where simrun resolves every name. (A test may
// replace it with a registry of its own.)
var builtins func() *registry.Registry = all.Default
