; Inno Setup 6 script for the VoxDesk Windows installer.
; Built by installer\build_windows.ps1, which passes the version (read from pyproject.toml, the one
; place it is kept), the bundle folder and the variant:
;   iscc /DAppVersion=0.1.0 /DBundleDir=..\dist\VoxDesk /DVariant=cuda /O..\dist installer\voxdesk.iss
; The installed program never writes next to itself: voices, models, settings and logs live in
; %LOCALAPPDATA%\VoxDesk (app/paths.py), which the uninstaller keeps unless the user asks otherwise.

#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=X.Y.Z (build_windows.ps1 does)
#endif
#ifndef BundleDir
  #define BundleDir "..\dist\VoxDesk"
#endif
#ifndef Variant
  #define Variant "cuda"
#endif

#define AppName "VoxDesk"
#define AppExe "VoxDesk.exe"
#define UserDataDir "{localappdata}\VoxDesk"

[Setup]
; AppId identifies the product across versions (upgrades, uninstall): never change it.
AppId={{6C3E0F4B-2A71-4C1E-9B8E-5D0F7A9C2E41}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=VoxDesk
VersionInfoVersion={#AppVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Installs for the current user without administrator rights; the user may choose all users.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
SetupIconFile=..\resources\voxdesk.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName} {#AppVersion}
WizardStyle=modern
OutputBaseFilename=VoxDesk-{#AppVersion}-windows-{#Variant}-setup
; The CUDA bundle holds several GB of libraries: multi-threaded LZMA2, not solid, so that setup
; starts copying at once; past 4.2 GB compressed Inno Setup needs slices (-1.bin files beside it).
Compression=lzma2/max
SolidCompression=no
LZMAUseSeparateProcess=yes
LZMANumBlockThreads=4
#ifdef Span
DiskSpanning=yes
DiskSliceSize=max
#endif

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"

[InstallDelete]
; An upgrade replaces the whole library folder: stale files of an older torch or Qt must not linger.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{group}\{cm:UninstallProgram,{#AppName}}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Files the program itself may leave in its folder (Python caches); user data lives elsewhere.
Type: filesandordirs; Name: "{app}\_internal"

[Code]
{ After the program files are gone, ask whether the user's own data should go too. The default
  answer keeps it: voices took effort to record and models are large downloads. A silent
  uninstall never deletes user data. }
procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  DataDir: String;
begin
  if CurUninstallStep <> usPostUninstall then
    exit;
  DataDir := ExpandConstant('{#UserDataDir}');
  if UninstallSilent or not DirExists(DataDir) then
    exit;
  if MsgBox('Also delete your VoxDesk voices, downloaded models, settings and logs?' + #13#10#13#10 +
            'They are in ' + DataDir + #13#10#13#10 +
            'Choose No to keep them for a later installation.',
            mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES then
  begin
    if not DelTree(DataDir, True, True, True) then
      MsgBox('Some files in ' + DataDir + ' could not be deleted. You can delete that folder yourself.',
             mbInformation, MB_OK);
  end;
end;
