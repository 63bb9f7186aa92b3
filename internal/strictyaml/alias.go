package strictyaml

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// AtAliasUse returns e moved to where its field reaches an alias: a
// value that comes from an anchor (&name) through an alias (*name) is
// reported at the alias, where the user wrote the use, with the anchor's
// position in the message, so that both are named. An error whose field
// path below root crosses no alias, or that is not at a position inside
// the anchored value, is returned unchanged.
func AtAliasUse(root *yaml.Node, e *Error) *Error {
	if root == nil || e == nil || e.Field == "" || e.Line == 0 {
		return e
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	var use *yaml.Node
	for _, seg := range splitPath(e.Field) {
		raw := rawStep(n, seg)
		if raw == nil {
			break
		}
		if raw.Kind == yaml.AliasNode && raw.Alias != nil && use == nil {
			use = raw
		}
		n = unwrap(raw)
	}
	if use == nil || (use.Line == e.Line && use.Column == e.Column) {
		return e
	}
	c := *e
	c.Line, c.Column = use.Line, use.Column
	where := ""
	if e.Line != use.Alias.Line || e.Column != use.Alias.Column {
		where = fmt.Sprintf(", the value in error at line %d, column %d", e.Line, e.Column)
	}
	c.Msg = fmt.Sprintf("%s (through the alias *%s here; its anchor &%s is at line %d, column %d%s)",
		e.Msg, use.Value, use.Value, use.Alias.Line, use.Alias.Column, where)
	return &c
}

// rawStep is step without following the alias it reaches.
func rawStep(n *yaml.Node, seg string) *yaml.Node {
	if n == nil {
		return nil
	}
	if strings.HasPrefix(seg, "[") {
		i, err := strconv.Atoi(strings.TrimSuffix(seg[1:], "]"))
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return nil
		}
		return n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k != nil && k.Kind == yaml.ScalarNode && k.Value == seg {
			return n.Content[i+1]
		}
	}
	return nil
}
