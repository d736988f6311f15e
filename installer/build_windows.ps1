<#
.SYNOPSIS
  Build the VoxDesk Windows bundle (dist\VoxDesk), test it, zip it and wrap it in an installer.

.DESCRIPTION
  1. creates a venv (build\venv-bundle) with the given Python (3.10-3.12),
  2. installs torch from the PyTorch project's wheel index (a CUDA build by default; PyPI's Windows
     torch is CPU-only) and, for CUDA, the triton-windows release that matches that torch,
  3. installs VoxDesk and PyInstaller, runs `pyinstaller pyinstaller.spec`,
  4. runs the frozen self-test with both executables (voxdesk-cli.exe and the windowed VoxDesk.exe),
  5. zips the bundle and builds the installer with Inno Setup 6 (iscc), and prints sizes.
  Run from anywhere:  powershell -ExecutionPolicy Bypass -File installer\build_windows.ps1 [-Cpu]

.PARAMETER Cuda
  The PyTorch wheel index to take torch from: cu126 or cu128 (default; the first with RTX 50xx support).
.PARAMETER Cpu
  Build the CPU-only variant instead (no CUDA libraries, no Triton: a much smaller download).
.PARAMETER TorchVersion
  torch version to install (default 2.13.0).
.PARAMETER TritonSpec
  pip requirement for triton-windows; by default derived from TorchVersion (see PLATFORM-NOTES).
.PARAMETER Python
  The Python used to create the venv (default: python on PATH).
.PARAMETER SkipInstaller
  Stop after the zip (no Inno Setup needed).
#>
param(
    [ValidateSet("cu126", "cu128")] [string] $Cuda = "cu128",
    [switch] $Cpu,
    [string] $TorchVersion = "2.13.0",
    [string] $TritonSpec = "",
    [string] $Python = "python",
    [switch] $SkipInstaller
)

$ErrorActionPreference = "Stop"
$Root = Split-Path -Parent $PSScriptRoot
Set-Location $Root
$Clock = [Diagnostics.Stopwatch]::StartNew()

function Invoke-Step([string] $Title, [scriptblock] $Command) {
    Write-Host "==> $Title" -ForegroundColor Cyan
    & $Command
    if ($LASTEXITCODE -ne 0) { throw "$Title failed (exit code $LASTEXITCODE)" }
}

function Get-TritonSpec([string] $Torch) {
    # triton-windows pairs with torch minor versions: 2.12/2.13 -> 3.7.x, 2.14 -> 3.8.x.
    $minor = ($Torch -split "\.")[0..1] -join "."
    switch ($minor) {
        { $_ -in "2.12", "2.13" } { return "triton-windows>=3.7,<3.8" }
        "2.14" { return "triton-windows>=3.8,<3.9" }
        default { throw "No known triton-windows release for torch ${Torch}: pass -TritonSpec." }
    }
}

function Format-Size([double] $Bytes) { "{0:N0} MB" -f ($Bytes / 1MB) }

function Get-FolderSize([string] $Path) {
    (Get-ChildItem -LiteralPath $Path -Recurse -File | Measure-Object -Sum Length).Sum
}

$Variant = if ($Cpu) { "cpu" } else { "cuda" }
$Index = if ($Cpu) { "https://download.pytorch.org/whl/cpu" } else { "https://download.pytorch.org/whl/$Cuda" }
$Venv = Join-Path $Root "build\venv-bundle"
$Py = Join-Path $Venv "Scripts\python.exe"

# ---- environment ------------------------------------------------------------------------------
if (-not (Test-Path $Py)) {
    Invoke-Step "create venv" { & $Python -m venv $Venv }
}
Invoke-Step "upgrade pip" { & $Py -m pip install --quiet --upgrade pip }
Invoke-Step "install torch $TorchVersion ($Variant, $Index)" {
    & $Py -m pip install --quiet "torch==$TorchVersion" --index-url $Index
}
if (-not $Cpu) {
    if (-not $TritonSpec) { $TritonSpec = Get-TritonSpec $TorchVersion }
    Invoke-Step "install $TritonSpec" { & $Py -m pip install --quiet $TritonSpec }
}
# torch is already satisfied, so installing the app keeps the build chosen above.
Invoke-Step "install VoxDesk and PyInstaller" { & $Py -m pip install --quiet ".[bundle]" }
Invoke-Step "check torch" {
    & $Py -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
}
$Version = (& $Py installer\version.py).Trim()

# ---- bundle -----------------------------------------------------------------------------------
$BuildClock = [Diagnostics.Stopwatch]::StartNew()
Invoke-Step "pyinstaller" { & $Py -m PyInstaller --noconfirm --clean pyinstaller.spec }
$BuildSeconds = [int]$BuildClock.Elapsed.TotalSeconds
$Bundle = Join-Path $Root "dist\VoxDesk"

# ---- frozen self-test -------------------------------------------------------------------------
# A throwaway user folder, so the test neither reads nor leaves anything in the real one.
$env:VOXDESK_HOME = Join-Path $Root "build\selftest-home"
Remove-Item -Recurse -Force $env:VOXDESK_HOME -ErrorAction SilentlyContinue
Invoke-Step "self-test (voxdesk-cli.exe)" { & "$Bundle\voxdesk-cli.exe" --self-test }
Write-Host "==> self-test (VoxDesk.exe, windowed: its report goes to console.log)" -ForegroundColor Cyan
$Gui = Start-Process -FilePath "$Bundle\VoxDesk.exe" -ArgumentList "--self-test" -Wait -PassThru
Get-Content (Join-Path $env:VOXDESK_HOME "logs\console.log") -ErrorAction SilentlyContinue
if ($Gui.ExitCode -ne 0) { throw "windowed self-test failed (exit code $($Gui.ExitCode))" }
Remove-Item Env:VOXDESK_HOME

# ---- zip and installer ------------------------------------------------------------------------
$Zip = Join-Path $Root "dist\VoxDesk-$Version-windows-$Variant.zip"
Remove-Item $Zip -ErrorAction SilentlyContinue
Invoke-Step "zip" { & "$env:SystemRoot\System32\tar.exe" -a -c -f $Zip -C (Join-Path $Root "dist") VoxDesk }

$Setup = $null
if (-not $SkipInstaller) {
    $Iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
    foreach ($dir in @(${env:ProgramFiles(x86)}, $env:ProgramFiles, "$env:LOCALAPPDATA\Programs")) {
        if (-not $Iscc -and $dir -and (Test-Path "$dir\Inno Setup 6\ISCC.exe")) { $Iscc = "$dir\Inno Setup 6\ISCC.exe" }
    }
    if (-not $Iscc) { throw "Inno Setup 6 not found: install it (choco install innosetup) or pass -SkipInstaller." }
    $BundleBytes = Get-FolderSize $Bundle
    $IsccArgs = @("/DAppVersion=$Version", "/DBundleDir=$Bundle", "/DVariant=$Variant", "/O$Root\dist")
    # Inno Setup needs slices past 4.2 GB compressed; a bundle this large may get there.
    if ($BundleBytes -gt 5GB) { $IsccArgs += "/DSpan" }
    Invoke-Step "installer (Inno Setup)" { & $Iscc @IsccArgs installer\voxdesk.iss }
    $Setup = Join-Path $Root "dist\VoxDesk-$Version-windows-$Variant-setup.exe"
}

# ---- report -----------------------------------------------------------------------------------
Write-Host ""
Write-Host "VoxDesk $Version ($Variant) built in $([int]$Clock.Elapsed.TotalMinutes) min (PyInstaller: $BuildSeconds s)"
Write-Host "bundle:    $(Format-Size (Get-FolderSize $Bundle))  $Bundle"
Write-Host "zip:       $(Format-Size (Get-Item $Zip).Length)  $Zip"
if ($Setup) {
    $Slices = Get-ChildItem (Join-Path $Root "dist") -Filter "VoxDesk-$Version-windows-$Variant-setup*"
    Write-Host "installer: $(Format-Size ($Slices | Measure-Object -Sum Length).Sum)  $($Slices.Name -join ', ')"
}
Write-Host "largest files:"
Get-ChildItem -LiteralPath $Bundle -Recurse -File | Sort-Object Length -Descending | Select-Object -First 10 |
    ForEach-Object { Write-Host ("  {0,10}  {1}" -f (Format-Size $_.Length), $_.FullName.Substring($Bundle.Length + 1)) }
