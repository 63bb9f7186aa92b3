package strictyaml

import "testing"

// FuzzUnmarshal checks that no input makes decoding, merging or finding panic.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte("name: x\nseed: 3\nmachine: {name: sx4, params: {semop_us: 1.5}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		err := Unmarshal("fuzz.yaml", data, &d)
		if err != nil {
			for _, e := range Errors(err) {
				if _, ok := e.(*Error); !ok {
					t.Fatalf("error of type %T: %v", e, e)
				}
			}
			_ = err.Error()
		}
		var m map[string]any
		_ = Unmarshal("fuzz.yaml", data, &m)
		root, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		merged := Merge(root, root)
		var p params
		_ = Decode("fuzz.yaml", merged, &p)
		_ = Decode("fuzz.yaml", Merge(merged, Find(root, "machine.params")), &d)
		_ = FieldError("fuzz.yaml", root, "series[0].params.a", "x")
	})
}
