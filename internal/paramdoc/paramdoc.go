// Package paramdoc holds the documentation of every parameter a scenario
// may set: the doc comment of each YAML field of the machines', stacks'
// and workloads' parameter structs, extracted from their Go source
// (Extract) by go generate into a file of each package (GenFile), which
// gives each struct a ParamDocs method, so that the comments that cite
// each default's source stay the one place it is written and a new
// package carries its own. simrun params prints them. It imports only
// the standard library.
package paramdoc

import "reflect"

// Field is one YAML field of a parameter struct.
type Field struct {
	YAML string // the YAML name
	Go   string // the Go field name
	Doc  string // its doc comment, one paragraph
}

// Documented is a parameter struct that carries its fields' docs (the
// method go generate writes in its package's GenFile).
type Documented interface {
	ParamDocs() []Field
}

// Dirs are the directories (relative to the module root) whose packages
// hold parameter structs.
var Dirs = []string{"machines", "stacks", "workloads", "sim/net"}

// Of returns the fields of struct type t in source order, or nil when the
// type is not Documented.
func Of(t reflect.Type) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || !t.Implements(reflect.TypeFor[Documented]()) {
		return nil
	}
	return reflect.Zero(t).Interface().(Documented).ParamDocs()
}
