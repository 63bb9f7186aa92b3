package t3d

// MemoryBytes is the memory one PE can allocate: its local memory
// (memory_mb; machines.Memory).
func (m *Machine) MemoryBytes() int { return m.params.MemoryMB << 20 }
