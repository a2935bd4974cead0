<?php
/**
 * A small real scenario with the generated client, run by the platform's tests against a running platform:
 *   composer dump-autoload
 *   RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> php scenario.php
 * Prints one JSON line: what it created, listed and read.
 */
declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

use Records\Client\Api\ModulesApi;
use Records\Client\Api\RecordsApi;
use Records\Client\Api\SpacesApi;
use Records\Client\Configuration;
use Records\Client\Model\ModuleCreate;
use Records\Client\Model\RecordCreate;
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

$admin = (new Configuration())->setHost(setting('RECORDS_URL'))->setAccessToken(setting('RECORDS_TOKEN'));
$http = new GuzzleHttp\Client();
$spaces = new SpacesApi($http, $admin);
$modules = new ModulesApi($http, $admin);
$records = new RecordsApi($http, $admin);

$space = $spaces->createSpace(new SpaceCreate(['name' => 'Scenario php']));
$module = $modules->createModule(new ModuleCreate(['space_id' => $space->getId(), 'name' => 'Tickets']));
foreach (['Printer', 'Scanner', 'Router'] as $name) {
    $records->createRecord(new RecordCreate(['module_id' => $module->getId(), 'name' => $name]));
}

$filtered = $records->listModuleRecords($module->getId(), 'name~%t%', null, null, 'name;ASC');

echo json_encode([
    'space' => $space->getName(),
    'module' => $module->getName(),
    'filtered' => array_map(fn ($record) => $record->getName(), $filtered->getItems()),
    'total' => $filtered->getMeta()->getTotal(),
]), "\n";
