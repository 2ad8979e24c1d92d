// Package elfcheck tells, from an executable's bytes alone, whether it really
// is for a given platform.
//
// [Check] compares the ELF header (class, byte order, machine and, for arm,
// the EABI version and float-ABI flags) with a platform; a mismatch is a
// [*MismatchError] whose message says what the binary is and what was wanted:
//
//	binary is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64
//
// Some variants are invisible in the ELF header. Go writes the same e_flags
// (0x05000002: EABI version 5, no float-ABI flag) for GOARM=5, 6 and 7, and
// nothing in the header records GOAMD64. For Go binaries [GoInfo] reads the
// embedded build settings and [CheckGo] compares GOARM and GOAMD64 with the
// platform's variant, so a linux/arm/v6 binary is told apart from a
// linux/arm/v7 one.
//
// [Static] reports whether an executable needs a dynamic loader. Anything that
// is not an ELF file yields an error wrapping [ErrNotELF]. Nothing here panics
// on malformed input, and nothing reads more than the header, the program
// headers, the dynamic segment and (for Go binaries) the build info.
package elfcheck
