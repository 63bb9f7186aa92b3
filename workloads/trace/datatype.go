package trace

// datatypeBytes are the sizes of MPI's predefined datatypes by the number
// SimGrid 3.32 writes for them in a time-independent trace (the datatype's
// id: each one traced by bench/traces/src/datatypes.c, whose sends of one
// element of every type give the id, and MPI_Type_size the bytes). A
// derived datatype has an id of its own that a replay cannot size: it is
// an error naming the id.
var datatypeBytes = map[int]int{
	0:  8,  // MPI_DOUBLE
	1:  4,  // MPI_INT, MPI_INTEGER
	2:  1,  // MPI_CHAR
	3:  2,  // MPI_SHORT
	4:  8,  // MPI_LONG
	5:  4,  // MPI_FLOAT
	6:  1,  // MPI_BYTE
	7:  8,  // MPI_LONG_LONG
	8:  1,  // MPI_SIGNED_CHAR
	9:  1,  // MPI_UNSIGNED_CHAR
	10: 2,  // MPI_UNSIGNED_SHORT
	11: 4,  // MPI_UNSIGNED
	12: 8,  // MPI_UNSIGNED_LONG
	13: 8,  // MPI_UNSIGNED_LONG_LONG
	14: 16, // MPI_LONG_DOUBLE
	15: 4,  // MPI_WCHAR
	16: 1,  // MPI_C_BOOL
	17: 1,  // MPI_INT8_T
	18: 2,  // MPI_INT16_T
	19: 4,  // MPI_INT32_T
	20: 8,  // MPI_INT64_T
	21: 1,  // MPI_UINT8_T
	22: 2,  // MPI_UINT16_T
	23: 4,  // MPI_UINT32_T
	24: 8,  // MPI_UINT64_T
	25: 8,  // MPI_C_FLOAT_COMPLEX, MPI_COMPLEX
	26: 16, // MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX
	28: 8,  // MPI_AINT
	29: 8,  // MPI_OFFSET
	30: 8,  // MPI_FLOAT_INT
	31: 16, // MPI_LONG_INT
	32: 16, // MPI_DOUBLE_INT
	33: 8,  // MPI_SHORT_INT
	34: 8,  // MPI_2INT
	35: 8,  // MPI_2FLOAT
	36: 16, // MPI_2DOUBLE
	37: 16, // MPI_2LONG
	38: 4,  // MPI_REAL
	39: 4,  // MPI_REAL4
	40: 8,  // MPI_REAL8
	50: 32, // MPI_LONG_DOUBLE_INT
	57: 1,  // MPI_PACKED
	59: 8,  // MPI_COUNT
}

// Default datatypes of a trace whose actions name none: MPI_BYTE, or
// MPI_DOUBLE when its init action has an argument (SimGrid's replay,
// InitAction: "default MPE datatype" and "default TAU datatype").
const (
	dtByte   = 6
	dtDouble = 0
)
