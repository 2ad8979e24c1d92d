#include "textflag.h"

// func int80raw(nr uint32) int32
TEXT ·int80raw(SB), NOSPLIT, $0-12
	MOVL nr+0(FP), AX
	INT $0x80
	MOVL AX, ret+8(FP)
	RET
