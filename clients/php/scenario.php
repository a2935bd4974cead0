<?php
/**
 * A small real scenario with the generated client, run by the platform's tests against a running platform:
 *   composer dump-autoload
 *   RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> php scenario.php
 * Prints one JSON line: what it created, listed and read.
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

use Records\Client\Api\FieldsApi;
use Records\Client\Api\HistoryApi;
use Records\Client\Api\ModulesApi;
use Records\Client\Api\RecordsApi;
use Records\Client\Api\SpacesApi;
use Records\Client\Configuration;
use Records\Client\Model\FieldCreate;
use Records\Client\Model\FieldType;
use Records\Client\Model\ModuleCreate;
use Records\Client\Model\RecordCreate;
use Records\Client\Model\RecordUpdate;
use Records\Client\Model\SpaceCreate;

function setting(string $name): string
{
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "$name is not set\n");
        exit(1);
    }
    return $value;
}

$url = setting('RECORDS_URL');
$admin = (new Configuration())->setHost($url)->setAccessToken(setting('RECORDS_TOKEN'));
$http = new GuzzleHttp\Client();
$records = new RecordsApi($http, $admin);

$space = (new SpacesApi($http, $admin))->createSpace(new SpaceCreate(['name' => 'Scenario php']));
$module = (new ModulesApi($http, $admin))->createModule(
    new ModuleCreate(['space_id' => $space->getId(), 'name' => 'Tickets'])
);
$status = (new FieldsApi($http, $admin))->createField(
    new FieldCreate(['module_id' => $module->getId(), 'name' => 'Status', 'type' => FieldType::TEXT])
);
$created = [];
foreach (['Printer' => 'open', 'Scanner' => 'open', 'Router' => 'closed'] as $name => $value) {
    $created[$name] = $records->createRecord(new RecordCreate([
        'module_id' => $module->getId(),
        'name' => $name,
        'fields' => ['status' => $value],
    ]))->getId();
}
$records->updateRecordById($created['Printer'], new RecordUpdate(['fields' => ['status' => 'closed']]));

$closed = $records->listModuleRecords($module->getId(), filter: 'status=closed', order: 'name;ASC');
$history = (new HistoryApi($http, $admin))->listFieldHistory(
    $module->getId(),
    $created['Printer'],
    filter: 'field=fields.' . $status->getKey()
);

$names = fn (array $items) => array_map(fn ($record) => $record->getName(), $items);
echo json_encode([
    'space' => $space->getName(),
    'module' => $module->getName(),
    'field' => $status->getKey(),
    'closed' => $names($closed->getItems()),
    'history' => array_map(fn ($change) => [$change->getOldValue(), $change->getNewValue()], $history->getItems()),
]), "\n";
