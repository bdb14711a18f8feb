/* A stand-in for Windows' bcryptprimitives.dll, for running codeact's tests under Wine 8, which
 * lacks it: Rust's standard library takes its random bytes from `ProcessPrng` there. This one
 * asks advapi32's RtlGenRandom (`SystemFunction036`), which Wine has. Test-only: it is built
 * into the Wine prefix by tests/windows/wine-setup and never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
