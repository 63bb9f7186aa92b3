package litmus

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/sim/mem"
)

// modelFile is a CPU model in YAML: optionally a built-in model to start
// from, then any mem.Config fields to override, e.g.
//
//	base: tso
//	store_buffer: {order: reordered}
type modelFile struct {
	Base       string `yaml:"base"`
	mem.Config `yaml:",inline"`
}

// LoadModel returns the CPU model called name: NMCA (a zero Config: the
// model is not a mem.CPU), a built-in (mem.Builtin: sc, tso, pso,
// noncoherent) or a YAML file of mem.Config fields (with an optional
// "base: <built-in>"). A relative file is looked up in dir first
// (the scenario's directory), then in the working directory. Errors name
// the file, line and field.
func LoadModel(name, dir string) (mem.Config, error) {
	return LoadModelCapped(name, dir, 0)
}

// LoadModelCapped is LoadModel refusing a file larger than maxBytes (0:
// inputfile.DefaultMaxBytes) and a path that is not a regular file.
func LoadModelCapped(name, dir string, maxBytes int64) (mem.Config, error) {
	if name == NMCA { // an operational model of its own, with no mem.Config
		return mem.Config{}, nil
	}
	if slices.Contains(mem.BuiltinNames(), name) {
		return mem.Builtin(name)
	}
	file := inDir(name, dir)
	data, err := inputfile.Read(file, maxBytes)
	if err != nil {
		return mem.Config{}, fmt.Errorf("model %q is neither a built-in model (%s) nor a readable file: %w",
			name, strings.Join(append(mem.BuiltinNames(), NMCA), ", "), err)
	}
	return ParseModel(file, data)
}

// ParseModel decodes a CPU model file's contents strictly and validates it.
func ParseModel(file string, data []byte) (mem.Config, error) {
	root, err := strictyaml.Parse(file, data)
	if err != nil {
		return mem.Config{}, err
	}
	var m modelFile
	if n := strictyaml.Find(root, "base"); n != nil && n.Value != "" {
		cfg, err := mem.Builtin(n.Value)
		if err != nil {
			return mem.Config{}, strictyaml.Errorf(file, n, "base", "%v", err)
		}
		m.Config = cfg
	}
	if err := strictyaml.Decode(file, root, &m); err != nil {
		return mem.Config{}, err
	}
	if err := m.Config.Validate(); err != nil {
		// Validate's messages start with the field path ("cache.ways must ...").
		msg := err.Error()
		field, _, _ := strings.Cut(msg, " ")
		return mem.Config{}, strictyaml.FieldError(file, root, field, "%s", msg)
	}
	return m.Config, nil
}

// ModelInfo describes a built-in model for simrun litmus --list.
type ModelInfo struct {
	Name, What, Shows string
}

// Models lists the built-in models, what each is and which classic tests'
// conditions it can show (see the package doc).
func Models() []ModelInfo {
	return []ModelInfo{
		{"sc", "no store buffer, coherent cache: sequential consistency", "nothing SC forbids"},
		{"tso", "FIFO store buffer with forwarding (x86-TSO, SPARC TSO)", "SB, SB+rfi-pos, R"},
		{"pso", "stores to different lines drain out of order (SPARC PSO)", "SB, R, MP, S, 2+2W"},
		{"noncoherent", "pso plus caches that other CPUs' writes do not update (SX-4 scalar caches)", "SB, R, 2+2W; a reader spinning through its cache livelocks"},
		{NMCA, "not multi-copy atomic, loads satisfied early (POWER, ARMv7)", "SB, MP, LB, R, S, 2+2W, IRIW, WRC"},
	}
}
