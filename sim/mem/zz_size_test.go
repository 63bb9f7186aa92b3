package mem

import (
	"testing"
	"unsafe"
)

func TestZZSizes(t *testing.T) {
	t.Logf("cache %d sparse %d line %d ref %d Segment %d chunk %d watcher %d", unsafe.Sizeof(cache{}), unsafe.Sizeof(sparse{}), unsafe.Sizeof(line{}), unsafe.Sizeof(ref{}), unsafe.Sizeof(Segment{}), unsafe.Sizeof(chunk{}), unsafe.Sizeof(watcher{}))
}
