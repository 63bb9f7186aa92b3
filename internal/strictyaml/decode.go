package strictyaml

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode decodes node strictly into out, a non-nil pointer. Only the fields
// present in the YAML are written. A nil node, or a zero yaml.Node (an absent
// raw field), decodes as an empty mapping. Field paths in errors start at the
// root of node; use DecodeAt when node is part of a larger file.
func Decode(file string, node *yaml.Node, out any) error {
	return DecodeAt(file, "", node, out)
}

// DecodeAt is Decode for a node found at field path field of its file (for
// example "machine.params"), so errors carry the full path
// ("machine.params.semop_us").
func DecodeAt(file, field string, node *yaml.Node, out any) error {
	v := reflect.ValueOf(out)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return &Error{File: file, Field: field, Msg: fmt.Sprintf("strictyaml: cannot decode into %T (need a non-nil pointer)", out)}
	}
	if node == nil || node.Kind == 0 {
		node = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if !isStructLike(v.Elem().Type()) {
			return nil
		}
	}
	d := &decoder{file: file, active: map[*yaml.Node]bool{}}
	d.budget = 10*countNodes(node, 0) + 100000
	return d.decode(node, v.Elem(), field)
}

// MaxErrors is the most errors one Decode reports: every problem of a file
// is listed at once, up to this many (then a last error says more were
// left out).
const MaxErrors = 50

// joinErrors is nil for no error, the error itself for one, and the
// errors joined (flat: one leaf per problem) for several.
func joinErrors(errs []error) error {
	var flat []error
	for _, e := range errs {
		flat = append(flat, Errors(e)...)
	}
	switch len(flat) {
	case 0:
		return nil
	case 1:
		return flat[0]
	}
	return errors.Join(flat...)
}

// Errors lists the problems in err: the leaves of errors joined with
// errors.Join (nil for nil).
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Errors(e)...)
	}
	return out
}

// collect appends err (if not nil) to errs. It reports false once the
// decoder has reported MaxErrors errors, so that callers stop decoding.
func (d *decoder) collect(errs *[]error, err error) bool {
	if err == nil {
		return !d.full
	}
	if d.full {
		return false
	}
	if _, joined := err.(interface{ Unwrap() []error }); !joined {
		d.nerr++ // a joined error comes from a nested collect: counted there
	}
	*errs = append(*errs, err)
	if d.nerr >= MaxErrors {
		d.full = true
		*errs = append(*errs, &Error{File: d.file, Msg: fmt.Sprintf("too many errors (the first %d are listed); fix them and validate again", MaxErrors)})
		return false
	}
	return true
}

// isStructLike reports whether t is a struct or (pointers to) a struct.
func isStructLike(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != nodeType
}

// countNodes counts the nodes of a tree without following aliases.
func countNodes(n *yaml.Node, depth int) int {
	if n == nil || depth > 10000 {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k, depth+1)
	}
	return c
}

var (
	nodeType            = reflect.TypeFor[yaml.Node]()
	nodePtrType         = reflect.TypeFor[*yaml.Node]()
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decoder holds the state of one Decode call.
type decoder struct {
	file   string
	budget int                 // nodes left to visit (bounds alias expansion)
	active map[*yaml.Node]bool // anchors being expanded (detects cycles)
	nerr   int                 // errors collected so far
	full   bool                // MaxErrors reached: stop decoding
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) error {
	return Errorf(d.file, n, field, format, args...)
}

// deref follows aliases and unwraps documents. release must be called when
// the caller is done with the returned node.
func (d *decoder) deref(n *yaml.Node, field string) (*yaml.Node, func(), error) {
	var held []*yaml.Node
	release := func() {
		for _, h := range held {
			delete(d.active, h)
		}
	}
	for depth := 0; ; depth++ {
		switch {
		case n.Kind == yaml.DocumentNode:
			if len(n.Content) == 0 {
				return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}, release, nil
			}
			n = n.Content[0]
		case n.Kind == yaml.AliasNode:
			if n.Alias == nil {
				release()
				return nil, nil, d.errorf(n, field, "unknown alias *%s", n.Value)
			}
			if d.active[n.Alias] {
				release()
				return nil, nil, d.errorf(n, field, "alias *%s refers to a value that contains it", n.Value)
			}
			d.active[n.Alias] = true
			held = append(held, n.Alias)
			n = n.Alias
		default:
			return n, release, nil
		}
		if depth > 1000 {
			release()
			return nil, nil, d.errorf(n, field, "aliases nested too deeply")
		}
	}
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, field string) error {
	if n == nil { // only in hand-built trees
		n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	d.budget--
	if d.budget < 0 {
		return d.errorf(n, field, "document too large (too many aliased values)")
	}
	n, release, err := d.deref(n, field)
	if err != nil {
		return err
	}
	defer release()

	switch v.Type() {
	case nodeType:
		v.Set(reflect.ValueOf(*n))
		return nil
	case nodePtrType:
		v.Set(reflect.ValueOf(n))
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if isNull(n) {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), field)
	}
	if ok, err := d.unmarshal(n, v, field); ok {
		return err
	}

	switch v.Kind() {
	case reflect.Struct:
		return d.decodeStruct(n, v, field)
	case reflect.Map:
		return d.decodeMap(n, v, field)
	case reflect.Slice:
		return d.decodeSlice(n, v, field)
	case reflect.Array:
		return d.decodeArray(n, v, field)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || isNull(n) {
			return d.errorf(n, field, "expected a string, got %s", describe(n))
		}
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
			switch strings.ToLower(n.Value) {
			case "true":
				v.SetBool(true)
				return nil
			case "false":
				v.SetBool(false)
				return nil
			}
		}
		return d.errorf(n, field, "expected true or false, got %s", describe(n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return d.decodeInt(n, v, field)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return d.decodeUint(n, v, field)
	case reflect.Float32, reflect.Float64:
		f, ok := parseFloat(n)
		if !ok {
			return d.errorf(n, field, "expected a number, got %s", describe(n))
		}
		if v.Kind() == reflect.Float32 && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
			return d.errorf(n, field, "number %s is out of range for float32", n.Value)
		}
		v.SetFloat(f)
		return nil
	case reflect.Interface:
		if v.NumMethod() == 0 {
			return d.decodeAny(n, v, field)
		}
	}
	return d.errorf(n, field, "strictyaml: unsupported Go type %s", v.Type())
}

// unmarshal decodes n into v with v's own yaml.Unmarshaler or (but for a
// struct) encoding.TextUnmarshaler, if it has one: ok says it did.
func (d *decoder) unmarshal(n *yaml.Node, v reflect.Value, field string) (ok bool, err error) {
	if !v.CanAddr() {
		return false, nil
	}
	a := v.Addr()
	if a.Type().Implements(unmarshalerType) {
		if err := a.Interface().(yaml.Unmarshaler).UnmarshalYAML(n); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return true, e
			}
			return true, d.errorf(n, field, "%v", err)
		}
		return true, nil
	}
	if a.Type().Implements(textUnmarshalerType) && v.Kind() != reflect.Struct {
		if n.Kind != yaml.ScalarNode || isNull(n) {
			return true, d.errorf(n, field, "expected a scalar value, got %s", describe(n))
		}
		if err := a.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return true, d.errorf(n, field, "%v", err)
		}
		return true, nil
	}
	return false, nil
}

// decodeAny decodes into an empty interface with yaml.v3's generic rules.
func (d *decoder) decodeAny(n *yaml.Node, v reflect.Value, field string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = d.errorf(n, field, "cannot decode value: %v", r)
		}
	}()
	var x any
	if err := n.Decode(&x); err != nil {
		return d.errorf(n, field, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if x == nil {
		v.SetZero()
	} else {
		v.Set(reflect.ValueOf(x))
	}
	return nil
}

// pair is one key/value of a mapping, after merge keys are expanded.
type pair struct{ key, value *yaml.Node }

// pairs lists the key/value pairs of mapping n, expanding merge keys (<<)
// with lower priority than explicit keys, and rejecting duplicate and
// non-scalar keys.
func (d *decoder) pairs(n *yaml.Node, field string) ([]pair, error) {
	d.budget--
	if d.budget < 0 {
		return nil, d.errorf(n, field, "document too large (too many aliased values)")
	}
	var out []pair
	var merges []*yaml.Node
	var dups []error
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k == nil || val == nil {
			return nil, d.errorf(n, field, "strictyaml: invalid node tree (nil key or value)")
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, val)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, d.errorf(k, field, "mapping keys must be plain names, got %s", describe(k))
		}
		if prev, dup := seen[k.Value]; dup {
			dups = append(dups, d.errorf(k, join(field, k.Value), "duplicate key %q (first given at line %d)", k.Value, prev.Line))
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k, val})
	}
	for _, m := range merges {
		src, release, err := d.deref(m, field)
		if err != nil {
			return nil, err
		}
		var srcs []*yaml.Node
		switch src.Kind {
		case yaml.MappingNode:
			srcs = []*yaml.Node{src}
		case yaml.SequenceNode:
			srcs = src.Content
		default:
			release()
			return nil, d.errorf(m, field, "merge key << needs a mapping or a list of mappings, got %s", describe(src))
		}
		for _, s := range srcs {
			if s == nil {
				release()
				return nil, d.errorf(m, field, "strictyaml: invalid node tree (nil merge source)")
			}
			sm, rel2, err := d.deref(s, field)
			if err != nil {
				release()
				return nil, err
			}
			if sm.Kind != yaml.MappingNode {
				rel2()
				release()
				return nil, d.errorf(s, field, "merge key << needs a mapping, got %s", describe(sm))
			}
			sub, err := d.pairs(sm, field)
			rel2()
			if err != nil {
				release()
				return nil, err
			}
			for _, p := range sub {
				if _, ok := seen[p.key.Value]; !ok {
					seen[p.key.Value] = p.key
					out = append(out, p)
				}
			}
		}
		release()
	}
	return out, joinErrors(dups)
}

// fieldInfo describes one decodable struct field.
type fieldInfo struct {
	name     string
	index    []int
	required bool
}

// structFields lists the decodable fields of struct type t in declaration
// order, descending into `yaml:",inline"` struct fields.
func structFields(t reflect.Type, prefix []int) []fieldInfo {
	var out []fieldInfo
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		inline := strings.Contains(","+opts+",", ",inline,") && f.Type.Kind() == reflect.Struct
		if name == "-" || (!f.IsExported() && !(f.Anonymous && inline)) {
			continue
		}
		index := append(append([]int(nil), prefix...), i)
		if inline {
			out = append(out, structFields(f.Type, index)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, fieldInfo{name: name, index: index, required: f.Tag.Get("required") == "true"})
	}
	return out
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, field string) error {
	if isNull(n) {
		return nil // keep what is there (defaults)
	}
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, field, "expected a mapping (name: value lines), got %s", describe(n))
	}
	fields := structFields(v.Type(), nil)
	byName := make(map[string]int, len(fields))
	for i, f := range fields {
		byName[f.name] = i
	}
	var errs []error
	ps, err := d.pairs(n, field)
	if !d.collect(&errs, err) {
		return joinErrors(errs)
	}
	present := make([]bool, len(fields))
	for _, p := range ps {
		i, ok := byName[p.key.Value]
		if !ok {
			names := make([]string, len(fields))
			for j, f := range fields {
				names[j] = f.name
			}
			msg := fmt.Sprintf("unknown field %q", p.key.Value)
			if s := suggest(p.key.Value, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			if len(names) == 0 {
				msg += "; no fields are allowed here"
			} else {
				msg += "; valid fields: " + strings.Join(names, ", ")
			}
			if !d.collect(&errs, d.errorf(p.key, join(field, p.key.Value), "%s", msg)) {
				return joinErrors(errs)
			}
			continue
		}
		present[i] = true
		if !d.collect(&errs, d.decode(p.value, v.FieldByIndex(fields[i].index), join(field, p.key.Value))) {
			return joinErrors(errs)
		}
	}
	for i, f := range fields {
		if f.required && !present[i] {
			if !d.collect(&errs, d.errorf(n, join(field, f.name), "missing required field %q", f.name)) {
				break
			}
		}
	}
	return joinErrors(errs)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, field string) error {
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		return d.errorf(n, field, "strictyaml: unsupported map key type %s", t.Key())
	}
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, field, "expected a mapping, got %s", describe(n))
	}
	var errs []error
	ps, err := d.pairs(n, field)
	if !d.collect(&errs, err) {
		return joinErrors(errs)
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, len(ps)))
	}
	for _, p := range ps {
		k := reflect.ValueOf(p.key.Value).Convert(t.Key())
		e := reflect.New(t.Elem()).Elem()
		if old := v.MapIndex(k); old.IsValid() {
			e.Set(old)
		}
		if err := d.decode(p.value, e, join(field, p.key.Value)); err != nil {
			if !d.collect(&errs, err) {
				break
			}
			continue
		}
		v.SetMapIndex(k, e)
	}
	return joinErrors(errs)
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, field string) error {
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.errorf(n, field, "expected a list, got %s", describe(n))
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	var errs []error
	for i, item := range n.Content {
		if !d.collect(&errs, d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", field, i))) {
			break
		}
	}
	v.Set(s)
	return joinErrors(errs)
}

func (d *decoder) decodeArray(n *yaml.Node, v reflect.Value, field string) error {
	if n.Kind != yaml.SequenceNode || len(n.Content) != v.Len() {
		return d.errorf(n, field, "expected a list of %d items, got %s", v.Len(), describe(n))
	}
	var errs []error
	for i, item := range n.Content {
		if !d.collect(&errs, d.decode(item, v.Index(i), fmt.Sprintf("%s[%d]", field, i))) {
			break
		}
	}
	return joinErrors(errs)
}

func (d *decoder) decodeInt(n *yaml.Node, v reflect.Value, field string) error {
	bits := v.Type().Bits()
	lo, hi := -int64(1)<<(bits-1), int64(uint64(1)<<(bits-1)-1)
	rangeErr := func() error {
		return d.errorf(n, field, "expected an integer from %d to %d, got %s", lo, hi, n.Value)
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
		if err == nil {
			v.SetInt(i)
			return nil
		}
		if errors.Is(err, strconv.ErrRange) || isBigInt(n.Value) {
			return rangeErr()
		}
	}
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!float" || n.ShortTag() == "!!int") {
		if f, ok := parseFloat(n); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
			if f < float64(lo) || f >= -float64(lo) {
				return rangeErr()
			}
			v.SetInt(int64(f))
			return nil
		}
	}
	return d.errorf(n, field, "expected an integer, got %s", describe(n))
}

func (d *decoder) decodeUint(n *yaml.Node, v reflect.Value, field string) error {
	bits := v.Type().Bits()
	hi := uint64(math.MaxUint64) >> (64 - bits)
	rangeErr := func() error {
		return d.errorf(n, field, "expected an integer from 0 to %d, got %s", hi, n.Value)
	}
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") && strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
		if f, ok := parseFloat(n); ok && f != 0 {
			return d.errorf(n, field, "expected a non-negative integer, got %s", n.Value)
		}
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		s := strings.TrimPrefix(strings.ReplaceAll(n.Value, "_", ""), "+")
		u, err := strconv.ParseUint(s, 0, bits)
		if err == nil {
			v.SetUint(u)
			return nil
		}
		if errors.Is(err, strconv.ErrRange) {
			return rangeErr()
		}
	}
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!float" || n.ShortTag() == "!!int") {
		if f, ok := parseFloat(n); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
			if f < 0 || f >= math.Ldexp(1, bits) {
				return rangeErr()
			}
			v.SetUint(uint64(f))
			return nil
		}
	}
	return d.errorf(n, field, "expected a non-negative integer, got %s", describe(n))
}

// isBigInt reports whether s looks like a decimal integer (too big to parse).
func isBigInt(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// parseFloat parses a scalar tagged !!int or !!float as a float64.
func parseFloat(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}
	tag := n.ShortTag()
	if tag != "!!int" && tag != "!!float" {
		return 0, false
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	switch strings.ToLower(s) {
	case ".inf", "+.inf":
		return math.Inf(1), true
	case "-.inf":
		return math.Inf(-1), true
	case ".nan":
		return math.NaN(), true
	}
	if tag == "!!int" {
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(i), true
		}
		if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			return float64(u), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// join appends a field name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
