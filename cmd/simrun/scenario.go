package main

import (
	"flag"
	"fmt"
	"github.com/msgsim/msgsim/internal/suggest"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
)

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	ms := fs.Bool("machines", false, "list the machines and their capabilities instead")
	ss := fs.Bool("stacks", false, "list the stacks, what they need and offer on each machine, instead")
	pos, code, ok := parseFlags(fs, "list", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("list", pos, 0, stderr) {
		return exitUsage
	}
	if *ms || *ss {
		reg := builtins()
		if *ms {
			listMachines(reg, stdout)
		}
		if *ss {
			listStacks(reg, stdout)
		}
		return exitOK
	}
	names, err := scenarios.Builtin()
	if err != nil {
		fmt.Fprintf(stderr, "simrun list: %v\n", err)
		return exitFailed
	}
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		title := ""
		if s, err := scenarios.LoadBuiltin(n); err != nil {
			title = "(invalid: " + firstLine(err.Error()) + ")"
		} else {
			title = s.Title
			if s.Expect != nil {
				title += " [expects " + s.Expect.Failure + "]"
			}
		}
		fmt.Fprintf(stdout, "%-*s  %s\n", width, n, title)
	}
	return exitOK
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func cmdShow(args []string, stdout, stderr io.Writer) int {
	pos, code, ok := parseFlags(flag.NewFlagSet("show", flag.ContinueOnError), "show", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("show", pos, 1, stderr) {
		return exitUsage
	}
	names, err := scenarios.Builtin()
	if err != nil {
		fmt.Fprintf(stderr, "simrun show: listing the built-in scenarios: %v\n", err)
		return exitFailed
	}
	if !slices.Contains(names, pos[0]) {
		if h := suggest.Hint(pos[0], names); h != "" {
			fmt.Fprintf(stderr, "simrun show: no built-in scenario %s%s; simrun list prints the built-ins\n", pos[0], h)
		} else {
			fmt.Fprintf(stderr, "simrun show: no built-in scenario %s; built-ins: %s\n(show prints built-ins only; a scenario file is already YAML)\n", pos[0], strings.Join(names, ", "))
		}
		return exitUsage
	}
	data, err := scenarios.BuiltinSource(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "simrun show: %v\n", err)
		return exitFailed
	}
	stdout.Write(withMeasuredOn(data))
	return exitOK
}

// withMeasuredOn is a built-in's source with a measured_on line before
// its top-level machine, when it has references or claims and does not
// say already: the copy a user edits then knows the system its paper's
// values were measured on, and leaves them out when it runs another.
func withMeasuredOn(data []byte) []byte {
	s, err := scenarios.Parse("show", data)
	if err != nil || s.MeasuredOn != nil || (len(s.References) == 0 && len(s.Claims) == 0) || s.Machine.Name == "" {
		return data
	}
	sys := "machine: " + s.Machine.Name
	if s.Stack.Name != "" {
		sys += ", stack: " + s.Stack.Name
	}
	var own []string // the series measured on a machine or stack of their own
	for _, se := range s.Series {
		var parts []string
		if se.Machine != nil && se.Machine.Name != "" {
			parts = append(parts, "machine: "+se.Machine.Name)
		}
		if se.Stack != nil && se.Stack.Name != "" {
			parts = append(parts, "stack: "+strconv.Quote(se.Stack.Name))
		}
		if len(parts) > 0 {
			own = append(own, strconv.Quote(se.Name)+": {"+strings.Join(parts, ", ")+"}")
		}
	}
	if len(own) > 0 || len(s.Series) > 0 {
		sys += ", series: {" + strings.Join(own, ", ") + "}"
	}
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "machine:") {
			ins := "# The references and claims below were measured on this machine and stack;\n" +
				"# a copy that runs another leaves them out (docs/references.md).\n" +
				"measured_on: {" + sys + "}\n"
			return []byte(strings.Join(lines[:i], "") + ins + strings.Join(lines[i:], ""))
		}
	}
	return data
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	maxEvents := maxEventsFlag(fs)
	maxMemory := maxMemoryFlag(fs)
	inputfile.Flag(fs)
	pos, code, ok := parseFlags(fs, "validate", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("validate", pos, 1, stderr) {
		return exitUsage
	}
	s, sp, errs := runner.Load(builtins(), pos[0], runner.LoadOptions{MaxEvents: *maxEvents, MaxInputBytes: inputfile.FromFlags(fs), MaxMemory: *maxMemory})
	if len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return exitUsage
	}
	for _, w := range runner.FaultWarnings(builtins(), s, sp, *maxEvents) {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stdout, "%s: ok (%d series, about %.1e events", s.File, len(sp), runner.Estimated(builtins(), sp))
	if m := runner.EstimatedSetup(builtins(), sp); m > 0 {
		fmt.Fprintf(stdout, ", set-up memory about %s", machines.Bytes(m))
	}
	fmt.Fprintln(stdout, ")")
	if s.LeftOut != "" {
		fmt.Fprintln(stdout, s.LeftOut)
	}
	return exitOK
}
