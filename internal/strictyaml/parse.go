package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Unmarshal parses data (the contents of file) and decodes it strictly into
// out, which must be a non-nil pointer. An empty document decodes as an empty
// mapping, so required fields are still reported missing.
func Unmarshal(file string, data []byte, out any) error {
	root, err := Parse(file, data)
	if err != nil {
		return err
	}
	return Decode(file, root, out)
}

// Parse parses one YAML document and returns its root node (never a
// DocumentNode). An empty document yields an empty mapping node at line 1.
// Malformed YAML, or more than one document, is an *Error naming file and
// line.
func Parse(file string, data []byte) (root *yaml.Node, err error) {
	defer func() {
		// yaml.v3 is not guaranteed panic-free on hostile input.
		if r := recover(); r != nil {
			root, err = nil, &Error{File: file, Msg: fmt.Sprintf("malformed YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return emptyMapping(), nil
		}
		return nil, yamlError(file, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(file, data, err)
		}
		if c := docContent(&extra); c != nil && !isNull(c) {
			return nil, &Error{File: file, Line: c.Line, Column: c.Column,
				Msg: "a second YAML document (after ---) is not allowed; put one scenario per file"}
		}
	}
	c := docContent(&doc)
	if c == nil || (isNull(c) && c.Value == "") {
		return emptyMapping(), nil
	}
	return c, nil
}

func emptyMapping() *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1}
}

// docContent unwraps a document node.
func docContent(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return n.Content[0]
	}
	if n.Kind == 0 {
		return nil
	}
	return n
}

var (
	yamlLineRE   = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). yaml.v3 reports their line 0-based; scanner lines are 1-based.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// yamlError wraps an error of the yaml package as an *Error, correcting
// yaml.v3's line numbering. When yaml.v3 gives no line the problem is on the
// first line, except for unknown anchors, whose first use is searched for.
func yamlError(file string, data []byte, err error) *Error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if slices.Contains(parserProblems, m[2]) {
			line++
		}
		return &Error{File: file, Line: line, Msg: "malformed YAML: " + m[2]}
	}
	if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
		e := &Error{File: file, Line: 1, Msg: fmt.Sprintf("unknown anchor %q: an alias *%s needs an earlier &%s", m[1], m[1], m[1])}
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			e.Line = 1 + bytes.Count(data[:i], []byte("\n"))
			e.Column = i - bytes.LastIndexByte(data[:i], '\n')
		}
		return e
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &Error{File: file, Line: 1, Msg: "malformed YAML: " + msg}
}
