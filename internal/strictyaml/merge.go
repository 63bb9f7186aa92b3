package strictyaml

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxMergeDepth bounds the recursion of Merge (aliases can make cycles).
const maxMergeDepth = 100

// Merge deep-merges two mapping nodes and returns a new node: keys of
// override win, nested mappings present on both sides are merged, and
// anything else (scalars, lists) in override replaces the value of base.
// Nested values that are aliases are not merged into (an alias on the
// override side replaces). Every value keeps its original line numbers, so errors found when the
// result is decoded point at the line the value came from. A nil, zero,
// or null side counts as absent; Merge(nil, nil) is nil. The inputs are
// not modified.
func Merge(base, override *yaml.Node) *yaml.Node {
	return merge(base, override, 0)
}

func merge(base, override *yaml.Node, depth int) *yaml.Node {
	base, override = present(base), present(override)
	switch {
	case base == nil && override == nil:
		return nil
	case override == nil:
		return deepCopy(base)
	case base == nil:
		return deepCopy(override)
	}
	b, o := base, override
	if depth == 0 {
		// Only the roots are followed through aliases: following nested
		// aliases could expand exponentially.
		b, o = unalias(base), unalias(override)
	}
	if b.Kind != yaml.MappingNode || o.Kind != yaml.MappingNode || depth > maxMergeDepth {
		return deepCopy(override)
	}
	out := *b
	out.Anchor = ""
	out.Content = nil
	// Index the override's keys (first occurrence of each).
	oIndex := map[string]int{}
	for i := 0; i+1 < len(o.Content); i += 2 {
		if k := o.Content[i]; k != nil && k.Kind == yaml.ScalarNode {
			if _, ok := oIndex[k.Value]; !ok {
				oIndex[k.Value] = i
			}
		}
	}
	used := map[int]bool{}
	for i := 0; i+1 < len(b.Content); i += 2 {
		k, v := b.Content[i], b.Content[i+1]
		j, ok := -1, false
		if k != nil && k.Kind == yaml.ScalarNode {
			j, ok = oIndex[k.Value]
		}
		if !ok {
			out.Content = append(out.Content, deepCopy(k), deepCopy(v))
			continue
		}
		if used[j] {
			continue // a duplicate key in base already overridden
		}
		used[j] = true
		mv := merge(v, o.Content[j+1], depth+1)
		if mv == nil { // both null: keep the override's null
			mv = deepCopy(o.Content[j+1])
		}
		out.Content = append(out.Content, deepCopy(o.Content[j]), mv)
	}
	for i := 0; i+1 < len(o.Content); i += 2 {
		if !used[i] {
			out.Content = append(out.Content, deepCopy(o.Content[i]), deepCopy(o.Content[i+1]))
		}
	}
	return &out
}

// present returns n unwrapped from a document, or nil when n is nil, a zero
// node or null.
func present(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind == 0 {
		return nil
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return present(n.Content[0])
	}
	if isNull(n) {
		return nil
	}
	return n
}

// unalias follows aliases (a bounded number of times).
func unalias(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	for i := 0; i < 100 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// deepCopy copies a node tree; alias nodes keep pointing at their original
// anchors, so cycles through aliases are not followed.
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = deepCopy(k)
		}
	}
	return &c
}

// Find returns the node at a field path below root, such as "series[2].name"
// or "machine.params.semop_us", following aliases; nil if it is absent.
func Find(root *yaml.Node, field string) *yaml.Node {
	n, ok := locate(root, field)
	if !ok {
		return nil
	}
	return n
}

// locate walks a field path as far as it exists and returns the deepest node
// reached, and whether the whole path was found.
func locate(root *yaml.Node, field string) (*yaml.Node, bool) {
	if root == nil {
		return nil, false
	}
	n := unwrap(root)
	if n == nil {
		return nil, false
	}
	for _, seg := range splitPath(field) {
		next := step(n, seg)
		if next == nil {
			return n, false
		}
		n = next
	}
	return n, true
}

func unwrap(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	for i := 0; i < 100; i++ {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		case n.Kind == yaml.AliasNode && n.Alias != nil:
			n = n.Alias
		default:
			return n
		}
	}
	return n
}

// step goes one path segment down: "[i]" indexes a list, a name a mapping.
func step(n *yaml.Node, seg string) *yaml.Node {
	if strings.HasPrefix(seg, "[") {
		i, err := strconv.Atoi(strings.TrimSuffix(seg[1:], "]"))
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return nil
		}
		return unwrap(n.Content[i])
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k != nil && k.Kind == yaml.ScalarNode && k.Value == seg {
			return unwrap(n.Content[i+1])
		}
	}
	return nil
}

// splitPath splits "a.b[2].c" into "a", "b", "[2]", "c".
func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.Index(part, "[")
			switch {
			case i < 0:
				out = append(out, part)
				part = ""
			case i > 0:
				out = append(out, part[:i])
				part = part[i:]
			default:
				j := strings.Index(part, "]")
				if j < 0 {
					out = append(out, part)
					part = ""
				} else {
					out = append(out, part[:j+1])
					part = part[j+1:]
				}
			}
		}
	}
	return out
}
