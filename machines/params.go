package machines

import (
	"errors"
	"fmt"
	"math"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"gopkg.in/yaml.v3"
)

// ParamError is an invalid machine parameter, named by its YAML name.
// Locate turns it into a strictyaml error carrying the file and line.
type ParamError struct {
	Machine string // machine name, e.g. "sx4"
	Field   string // YAML name, e.g. "semop_us" or "torus_nodes[1]"
	Msg     string // what is wrong and what is expected
}

// Error formats the error as "MACHINE: FIELD: MSG".
func (e *ParamError) Error() string { return e.Machine + ": " + e.Field + ": " + e.Msg }

// ParamErrorf returns a *ParamError for machine's parameter field.
func ParamErrorf(machine, field, format string, args ...any) error {
	return &ParamError{Machine: machine, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// FloatRange is a floating-point parameter and its plausible range.
type FloatRange struct {
	Field  string
	V      float64
	Lo, Hi float64
	Unit   string
}

// IntRange is an integer parameter and its plausible range.
type IntRange struct {
	Field  string
	V      int
	Lo, Hi int
	Unit   string
}

// CheckRanges returns a *ParamError for every value that is not finite or
// lies outside its range (floats first), joined with errors.Join, so that
// a user sees every bad value at once.
func CheckRanges(machine string, floats []FloatRange, ints []IntRange) error {
	var errs []error
	for _, f := range floats {
		switch {
		case math.IsNaN(f.V) || math.IsInf(f.V, 0):
			errs = append(errs, ParamErrorf(machine, f.Field, "must be a finite number, got %g", f.V))
		case f.V < f.Lo || f.V > f.Hi:
			errs = append(errs, ParamErrorf(machine, f.Field, "%g %s is outside the plausible range [%g, %g] %s", f.V, f.Unit, f.Lo, f.Hi, f.Unit))
		}
	}
	for _, f := range ints {
		if f.V < f.Lo || f.V > f.Hi {
			errs = append(errs, ParamErrorf(machine, f.Field, "%d %s is outside the plausible range [%d, %d] %s", f.V, f.Unit, f.Lo, f.Hi, f.Unit))
		}
	}
	return errors.Join(errs...)
}

// Locate turns a *ParamError into a strictyaml error at the parameter's line
// in the params node (at the node itself when the parameter is not written
// there); field is the node's path in the scenario ("machine.params").
// Other errors get the file and field as a prefix.
func Locate(file, field string, node *yaml.Node, err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok { // every problem, each at its line
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, Locate(file, field, node, e))
		}
		return errors.Join(errs...)
	}
	var pe *ParamError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %s: %w", file, field, err)
	}
	at := strictyaml.Find(node, pe.Field)
	if at == nil {
		at = node
	}
	path := pe.Field
	if field != "" {
		path = field + "." + pe.Field
	}
	return strictyaml.Errorf(file, at, path, "%s (%s)", pe.Msg, pe.Machine)
}

// Float is the FloatRange of field.
func Float(field string, v, lo, hi float64, unit string) FloatRange {
	return FloatRange{Field: field, V: v, Lo: lo, Hi: hi, Unit: unit}
}

// Int is the IntRange of field.
func Int(field string, v, lo, hi int, unit string) IntRange {
	return IntRange{Field: field, V: v, Lo: lo, Hi: hi, Unit: unit}
}

// The network models a machine with a network runs (its network_model
// parameter; sim/net's Config.Flow).
const (
	// NetworkUnits: packets, or units of a message, take the links of
	// their route one after the other (sim/net's unit model); the default.
	NetworkUnits = "units"
	// NetworkFlow: each message is one flow whose bytes share its route's
	// links max-min fairly with the other flows (sim/net's flow model):
	// far fewer events, at a stated error (docs/fidelity.md).
	NetworkFlow = "flow"
)

// PacketFeature is a machine parameter asking for something only the unit
// network model does (reordering packets, CRC errors, links going down,
// packets one by one): On when the parameter asks for it.
type PacketFeature struct {
	Field string // YAML name
	On    bool
	What  string // what it does, e.g. "reorders packets"
	Off   string // the YAML value that turns it off, e.g. "0"
}

// Networked is implemented by the params of a machine with a network, one
// that runs on either network model (its network_model parameter,
// NetworkUnits or NetworkFlow): the packet-only features as the params set
// them, which CheckNetworkModel refuses on the flow model. The registry
// reads it to tell which machines have a network (simrun run
// --compare-network runs them on both models).
type Networked interface {
	PacketFeatures() []PacketFeature
}

// CheckNetworkModel returns a *ParamError when model is neither
// NetworkUnits nor NetworkFlow, or when it is NetworkFlow and a packet
// feature is on: the error is at the feature's field and names both.
func CheckNetworkModel(machine, model string, features ...PacketFeature) error {
	switch model {
	case NetworkUnits:
		return nil
	case NetworkFlow:
	default:
		return ParamErrorf(machine, "network_model", "%q is not a network model: want %q or %q", model, NetworkUnits, NetworkFlow)
	}
	var errs []error
	for _, f := range features {
		if f.On {
			errs = append(errs, ParamErrorf(machine, f.Field, "%s, which only the unit network model does: with network_model: %s turn %s off (or use network_model: %s)", f.What, NetworkFlow, f.Field, NetworkUnits))
		}
	}
	return errors.Join(errs...)
}
