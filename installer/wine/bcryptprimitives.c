/* bcryptprimitives.dll for Wine 8.0 (Debian 12), which lacks it: the one export Rust programs use.
 *
 * Rust's standard library (1.78 and later) gets random bytes from ProcessPrng in
 * bcryptprimitives.dll, so every Rust extension in the bundle (tokenizers, safetensors) fails to load
 * under Wine 8.0 with "DLL load failed ... Module not found". Wine 9 has the DLL. build_windows_wine.sh
 * compiles this file with mingw-w64 and copies it into the Wine prefixes' system32 folder. It is
 * never part of the bundle: real Windows (8 and later) has the DLL.
 */
#include <windows.h>

#define RtlGenRandom SystemFunction036
BOOLEAN WINAPI RtlGenRandom(PVOID buffer, ULONG length); /* advapi32 */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!RtlGenRandom(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
